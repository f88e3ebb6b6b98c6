/**
 * Presets scale every experiment at once:
 * - micro: the smallest run that still takes every code path (one RL step of one prompt group; interleaved
 *          schemes still get their three RL stages), for the end-to-end test of `reproduce`;
 * - smoke: seconds per run, for tests and notebooks executed headless (nothing learned, every code path run);
 * - class: the live collapse of a classroom: 16 RL steps of 4 prompts, validation on 16 tasks every 4 steps, a final
 *          evaluation on 5 tasks per category; a notebook's retrain of vanilla-rl-lr1e-3 at this size finishes in
 *          minutes on the default wasm backend (README, "The notebooks"). Numbers this small are a demonstration,
 *          not a measurement: the tables come from the full preset;
 * - quick: the whole study at a small size, two seeds: 24 RL steps of 8 prompts, 20 test tasks per category
 *          (80 ID). 25 configs x 2 seeds took 47 min with `--jobs 2` on the native backend (README). It shows the
 *          first 24 steps: collapse at the high learning rates and which signals stop it, with +-10-point intervals;
 * - full:  the paper's shape at our scale: 150 RL steps of 16 prompts x 8 rollouts, three seeds, the final
 *          evaluation on every test task (400 ID, 300 format-OOD, 100 content-OOD), a branch point every 10
 *          RL steps. The README's full-size tables come from it;
 * - pipeline: the full preset at the paper's 300 RL steps, one seed, for its own study (the group 'pipeline':
 *          vanilla GRPO under each difference of the paper's pipeline, docs/design.md E) instead of the regime's.
 * Experiment configs read their sizes from here, so one preset flag changes the whole study coherently.
 * The full preset's sizes were set from measured step times (README: 34-42 min per vanilla RL run, two at a time).
 */

import { DEFAULT_REGIME, REGIMES, Regime, getRegime } from './regimes';

export type PresetName = 'micro' | 'smoke' | 'class' | 'quick' | 'full' | 'pipeline';
export const PRESETS: PresetName[] = ['micro', 'smoke', 'class', 'quick', 'full', 'pipeline'];

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
  /** Keep every resume state as a branch point (branches/step-<n>/, lib/experiments/store/branch.ts). */
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
  /** The report groups its study runs (ExperimentSpec.group), when not the regime's (Regime.groups). */
  groups?: string[];
  /**
   * The regime (lib/experiments/registry/regimes.ts): the base every config starts from, prompt scale, results store.
   */
  regime: Regime;
  /** The results-store folder under the results root: `<name>` (strong) or `<name>-instruct`. */
  store: string;
}

/** A preset's own sizes, before a regime scales them. */
type PresetSizes = Omit<Preset, 'regime' | 'store'>;

export const PRESET_TABLE: Record<PresetName, PresetSizes> = {
  micro: {
    name: 'micro', rlSteps: 1, promptsPerStep: 1, promptsPerMiniBatch: 1, valEvery: 1, valTasksPerCategory: 1,
    checkpointEvery: 1, resumePoints: false, baseEpochs: 1, corpusLimit: 16, fclEpochs: 1, trainTaskLimit: 3,
      evalTasksPerCategory: 1,
    seeds: [1],
  },
  smoke: {
    name: 'smoke', rlSteps: 3, promptsPerStep: 2, promptsPerMiniBatch: 1, valEvery: 3, valTasksPerCategory: 1,
    checkpointEvery: 2, resumePoints: false, baseEpochs: 1, corpusLimit: 64, fclEpochs: 1, trainTaskLimit: 16,
      evalTasksPerCategory: 1,
    seeds: [1],
  },
  class: {
    name: 'class', rlSteps: 16, promptsPerStep: 4, promptsPerMiniBatch: 2, valEvery: 4, valTasksPerCategory: 4,
    checkpointEvery: 0, resumePoints: false, baseEpochs: 8, corpusLimit: 0, fclEpochs: 3, trainTaskLimit: 0,
    evalTasksPerCategory: 5, seeds: [1],
  },
  quick: {
    name: 'quick', rlSteps: 24, promptsPerStep: 8, promptsPerMiniBatch: 4, valEvery: 6, valTasksPerCategory: 4,
    checkpointEvery: 6, resumePoints: false, baseEpochs: 8, corpusLimit: 0, fclEpochs: 3, trainTaskLimit: 0,
    evalTasksPerCategory: 20, seeds: [1, 2],
  },
  full: {
    name: 'full', rlSteps: 150, promptsPerStep: 16, promptsPerMiniBatch: 4, valEvery: 10, valTasksPerCategory: 16,
    checkpointEvery: 10, resumePoints: true, baseEpochs: 8, corpusLimit: 0, fclEpochs: 3, trainTaskLimit: 0,
    evalTasksPerCategory: 0, seeds: [1, 2, 3],
  },
  pipeline: {
    name: 'pipeline', rlSteps: 300, promptsPerStep: 16, promptsPerMiniBatch: 4, valEvery: 10, valTasksPerCategory: 16,
    checkpointEvery: 10, resumePoints: true, baseEpochs: 8, corpusLimit: 0, fclEpochs: 3, trainTaskLimit: 0,
    evalTasksPerCategory: 0, seeds: [1], groups: ['pipeline'],
  },
};

/** The report groups a preset's study runs: its own, else its regime's. */
export const studyGroups = (p: Preset): string[] => p.groups ?? p.regime.groups;

/** The preset and regime of a results-store folder name: "full" (strong), "full-instruct". */
export function getStorePreset(store: string): Preset {
  for (const name of PRESETS) {
    for (const r of REGIMES) if (name + getRegime(r).storeSuffix === store) return getPreset(name, r);
  }
  throw new Error(`"${store}" names no results store (expected a preset, optionally with a regime suffix: ` +
    `${PRESETS.flatMap((n) => REGIMES.map((r) => n + getRegime(r).storeSuffix)).join(', ')})`);
}

/** The preset `name` in `regime` (default strong): its prompts per step scaled, its store named. */
export function getPreset(name: string, regime: string = DEFAULT_REGIME): Preset {
  const p = (PRESET_TABLE as Record<string, PresetSizes>)[name];
  if (!p) throw new Error(`unknown preset "${name}" (expected one of ${PRESETS.join(', ')})`);
  const r = getRegime(regime);
  return {
    ...p, regime: r, store: p.name + r.storeSuffix,
    promptsPerStep: p.promptsPerStep * r.promptScale, promptsPerMiniBatch: p.promptsPerMiniBatch * r.promptScale,
  };
}
