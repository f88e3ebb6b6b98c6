/**
 * What an experiment is: where its policy starts, and the stages it runs (SFT or GRPO), each with a
 * partial config over the component defaults. Specs are data so that the registry (configs.ts) reads as
 * an index of the paper: every entry names the method or official script it mirrors and what differs.
 */
import { GPTConfig } from '../model/config';
import { SFTConfig } from '../train/sft';
import { GRPOConfig } from '../train/grpo/config';
import { Preset } from './presets';

export type InitFrom =
  /** A fresh model (only the base checkpoint is trained this way). */
  | { kind: 'scratch'; model?: Partial<Omit<GPTConfig, 'vocabSize'>> }
  /** A committed checkpoint folder, e.g. data/checkpoints/base (the paper's "instruct" model). */
  | { kind: 'checkpoint'; path: string }
  /** The final checkpoint of another experiment of the same preset and seed (run first if missing). */
  | { kind: 'experiment'; name: string };

export type SFTData =
  /** The general tool-use corpus (the ToolACE stand-in). */
  | 'corpus'
  /** Teacher trajectories of the training tasks (FCL-SFT). */
  | 'teacher-train';

export type StageSpec =
  | { kind: 'sft'; data: SFTData; config: Partial<SFTConfig> }
  | { kind: 'grpo'; config: Partial<GRPOConfig> };

export interface ExperimentSpec {
  name: string;
  /** One line for listings. */
  title: string;
  /** Which paper method / official script this mirrors, and what differs here. */
  paper: string;
  init: InitFrom;
  stages(preset: Preset): StageSpec[];
}

/** GRPO config fields every RL stage takes from the preset. */
export function rlSizes(p: Preset): Partial<GRPOConfig> {
  return {
    steps: p.rlSteps,
    promptsPerStep: p.promptsPerStep,
    promptsPerMiniBatch: p.promptsPerMiniBatch,
    valEvery: p.valEvery,
    valTasksPerCategory: p.valTasksPerCategory,
    checkpointEvery: p.checkpointEvery,
  };
}
