/**
 * Presets scale every experiment at once:
 * - micro: the smallest run that still takes every code path (one RL step of one prompt group; interleaved
 *          schemes still get their three RL stages), for the end-to-end test of `reproduce`;
 * - smoke: seconds per run, for tests and notebooks executed headless (nothing learned, every code path run);
 * - quick: the whole study on two cores with wasm, two seeds (the committed results);
 * - full:  closer to the paper's step counts (300 RL steps), for a long run.
 * Experiment configs read their sizes from here, so one preset flag changes the whole study coherently.
 */

export type PresetName = 'micro' | 'smoke' | 'quick' | 'full';
export const PRESETS: PresetName[] = ['micro', 'smoke', 'quick', 'full'];

export interface Preset {
  name: PresetName;
  /** RL steps of a plain GRPO run (paper: 300). Interleaved schemes split them 50 : 100 : 150. */
  rlSteps: number;
  /** Prompts per RL step (paper: 60) and per PPO mini-batch (paper: 20). */
  promptsPerStep: number;
  promptsPerMiniBatch: number;
  /** Greedy validation every k RL steps (paper: 5) on this many test tasks per category. */
  valEvery: number;
  valTasksPerCategory: number;
  /** Save a resume state every k RL steps. */
  checkpointEvery: number;
  /** Keep every resume state as a branch point (branches/step-<n>/, lib/experiments/branch.ts). */
  resumePoints: boolean;
  /** SFT epochs on the general corpus for the base checkpoint, and the share of the corpus used. */
  baseEpochs: number;
  corpusLimit: number;
  /** FCL-SFT epochs (paper: 3) and the number of train tasks used. */
  fclEpochs: number;
  trainTaskLimit: number;
  /** Test tasks per category for the final evaluation (paper: 100); 0 = all. */
  evalTasksPerCategory: number;
  /** Seeds of `reproduce`. */
  seeds: number[];
}

export const PRESET_TABLE: Record<PresetName, Preset> = {
  micro: {
    name: 'micro', rlSteps: 1, promptsPerStep: 1, promptsPerMiniBatch: 1, valEvery: 1, valTasksPerCategory: 1,
    checkpointEvery: 1, resumePoints: false, baseEpochs: 1, corpusLimit: 16, fclEpochs: 1, trainTaskLimit: 3, evalTasksPerCategory: 1,
    seeds: [1],
  },
  smoke: {
    name: 'smoke', rlSteps: 3, promptsPerStep: 2, promptsPerMiniBatch: 1, valEvery: 3, valTasksPerCategory: 1,
    checkpointEvery: 2, resumePoints: false, baseEpochs: 1, corpusLimit: 64, fclEpochs: 1, trainTaskLimit: 16, evalTasksPerCategory: 1,
    seeds: [1],
  },
  quick: {
    name: 'quick', rlSteps: 40, promptsPerStep: 4, promptsPerMiniBatch: 2, valEvery: 4, valTasksPerCategory: 8,
    checkpointEvery: 8, resumePoints: false, baseEpochs: 8, corpusLimit: 0, fclEpochs: 3, trainTaskLimit: 0, evalTasksPerCategory: 20,
    seeds: [1, 2],
  },
  full: {
    name: 'full', rlSteps: 300, promptsPerStep: 12, promptsPerMiniBatch: 4, valEvery: 5, valTasksPerCategory: 25,
    checkpointEvery: 10, resumePoints: true, baseEpochs: 8, corpusLimit: 0, fclEpochs: 3, trainTaskLimit: 0, evalTasksPerCategory: 0,
    seeds: [1, 2, 3],
  },
};

export function getPreset(name: string): Preset {
  const p = (PRESET_TABLE as Record<string, Preset>)[name];
  if (!p) throw new Error(`unknown preset "${name}" (expected one of ${PRESETS.join(', ')})`);
  return p;
}
