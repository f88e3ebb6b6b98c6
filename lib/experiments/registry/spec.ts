/**
 * What an experiment is: where its policy starts, and the stages it runs (SFT or GRPO), each with a
 * partial config over the component defaults. Specs are data so that the registry (configs.ts) reads as
 * an index of the paper: every entry names the method or official script it mirrors and what differs.
 */
import { GPTConfig } from '../../model/config';
import { SFTConfig } from '../../train/sft';
import { GRPOConfig } from '../../train/grpo/config';
import type { OPSConfig } from '../../train/signals/ops';
import type { HBGConfig } from '../../train/signals/hbg';
import type { SyncSFTConfig } from '../../train/signals/syncsft';
import type { GuardConfig } from '../run/guard';
import type { PipelineConfig } from '../../train/pipeline';
import { Preset } from './presets';

export type InitFrom =
  /** A fresh model (only the base checkpoint is trained this way). */
  | { kind: 'scratch'; model?: Partial<Omit<GPTConfig, 'vocabSize'>> }
  /** The regime's base checkpoint (the paper's instruct model; lib/experiments/registry/regimes.ts). */
  | { kind: 'base' }
  /** A committed checkpoint folder. */
  | { kind: 'checkpoint'; path: string }
  /** The final checkpoint of another experiment of the same preset and seed (run first if missing). */
  | { kind: 'experiment'; name: string };

export type SFTData =
  /** The general tool-use corpus (the ToolACE stand-in). */
  | 'corpus'
  /**
   * Teacher conversations of freshly generated world tasks that are in neither the train nor the test split
   * (`count` per training category): the few in-domain multi-turn dialogues an instruct model has seen.
   */
  | 'world-sample'
  /** Teacher trajectories of the training tasks (FCL-SFT). */
  | 'teacher-train';

/**
 * A synchronous supervisory signal inside every RL batch (docs/design.md A.6), with its typed config
 * (lib/train/signals; `--set ops.luffyGamma=0.1`, `--set hbg.hintedRollouts=1`, `--set syncsft.weight=2`).
 */
export type SignalSpec =
  | { kind: 'ops'; config?: Partial<OPSConfig> }
  | { kind: 'hbg'; config?: Partial<HBGConfig> }
  | { kind: 'sync-sft'; config?: Partial<SyncSFTConfig> };

export type StageSpec =
  /**
   * `count`: world-sample dialogues per training category. `replay`: corpus conversations mixed into the
   * stage's data (an instruct model keeps seeing general data while it learns a domain; without it the
   * corpus-only python syntax of format-OOD was forgotten). `extraWorld`: world-sample dialogues per training
   * category added to the stage's data (more generated tasks of the training distribution, in neither split).
   * `emptyCalls`: the share of the corpus's conversations (its own and the replayed ones) cut at a tool-call message
   * made a bare `<tool_call>\n` (lib/envs/corpus.ts withEmptyCalls).
   */
  | { kind: 'sft'; data: SFTData; config: Partial<SFTConfig>; count?: number; replay?: number; extraWorld?: number;
    emptyCalls?: number }
  /** `guard`: the adaptive collapse guard (lib/experiments/run/guard.ts), over its defaults. */
  | { kind: 'grpo'; config: Partial<GRPOConfig>; signal?: SignalSpec; guard?: Partial<GuardConfig> }
  /**
   * An interleaved SFT phase built from the previous RL stage's last `lastSteps` steps (ETS or PRS+ETS;
   * paper: 10, `--set interleave.lastSteps=5`).
   */
  | { kind: 'sft-interleaved'; source: 'ets' | 'prs'; lastSteps: number; config: Partial<SFTConfig> };

/** Where an experiment appears in the report. */
export type ExperimentGroup =
  /** Builds the committed base checkpoint; not part of `reproduce`. */
  | 'base'
  /** A row of Table 1 / Table 2 (baselines and supervisory signals). */
  | 'method'
  /** A row of the learning-rate sweep of vanilla GRPO. */
  | 'lr-sweep'
  /** Beyond the paper (the adaptive collapse guard and its fixed-schedule comparison). */
  | 'extra'
  /** The supervisory signals again at the learning rate where vanilla RL collapses (configs.ts COLLAPSE_LR). */
  | 'collapse-rate'
  /** FCL-SFT at more epochs than the paper's: how much supervision the base needs to gain (instruct regime). */
  | 'sft-dose'
  /** Vanilla GRPO at the paper's length under each difference of the paper's pipeline (docs/design.md E). */
  | 'pipeline';

export interface ExperimentSpec {
  name: string;
  /** One line for listings. */
  title: string;
  /** Short row label in tables, e.g. "ETS (lr high)". */
  label: string;
  group: ExperimentGroup;
  /** For `lr-sweep` rows: the GRPO learning rate. */
  sweepLr?: number;
  /** For `collapse-rate` rows: the main-rate config this one repeats at COLLAPSE_LR. */
  mainRate?: string;
  /** Which paper method / official script this mirrors, and what differs here. */
  paper: string;
  init: InitFrom;
  stages(preset: Preset): StageSpec[];
  /** The paper's pipeline differences this run lives with (lib/train/pipeline.ts); absent: the exact pipeline. */
  pipeline?: Partial<PipelineConfig>;
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
