/**
 * The registry of named experiments: an index of the paper. Each entry says which method or official
 * script it mirrors (DESIGN A.4, A.6) and what differs at our scale. Learning rates are ours (a ~0.25M
 * parameter model needs far larger steps than the paper's 1.5B model); their 10x ratios follow the paper.
 */
import { ExperimentSpec, rlSizes } from './spec';

/** The committed base checkpoint: the stand-in for Qwen2.5-1.5B-Instruct. */
export const BASE_CHECKPOINT = 'data/checkpoints/base';

/** SFT learning rates: the paper's 1e-5 ("high") and 1e-6 ("low") scaled for the tiny model, ratio kept. */
export const SFT_LR_HIGH = 1e-3;
export const SFT_LR_LOW = 1e-4;
/** GRPO learning rate of the main runs (the paper's 1e-6, scaled; see the LR sweep in the README). */
export const RL_LR = 3e-4;

const EXPERIMENTS: ExperimentSpec[] = [
  {
    name: 'base',
    title: 'Base "instruct" model: SFT from scratch on the general corpus',
    paper: 'Stands in for Qwen2.5-1.5B-Instruct: a policy with general tool-use skill but no training on the world ' +
      '(the paper starts every run from the released instruct checkpoint; we build ours from the ToolACE-like corpus).',
    init: { kind: 'scratch' },
    stages: (p) => [{ kind: 'sft', data: 'corpus', config: { lr: 3e-3, epochs: p.baseEpochs, batchSize: 16, warmupRatio: 0.05 } }],
  },
  {
    name: 'fcl-sft',
    title: 'FCL-SFT (lr high): SFT on teacher trajectories of the training tasks',
    paper: 'Paper FCL-SFT: teacher trajectories of the 300 training tasks, lr 1e-5, 3 epochs, batch 128, cosine, warmup 0.1. ' +
      'Here: lr scaled to SFT_LR_HIGH, batch 16 conversations (all assistant messages of a conversation in one sequence).',
    init: { kind: 'checkpoint', path: BASE_CHECKPOINT },
    stages: (p) => [{ kind: 'sft', data: 'teacher-train', config: { lr: SFT_LR_HIGH, epochs: p.fclEpochs, batchSize: 16, warmupRatio: 0.1 } }],
  },
  {
    name: 'fcl-sft-lowlr',
    title: 'FCL-SFT (lr low): the same with a 10x smaller learning rate',
    paper: 'Paper FCL-SFT at lr 1e-6 (the learning-rate comparison of DESIGN A.7). Here: SFT_LR_LOW = SFT_LR_HIGH / 10.',
    init: { kind: 'checkpoint', path: BASE_CHECKPOINT },
    stages: (p) => [{ kind: 'sft', data: 'teacher-train', config: { lr: SFT_LR_LOW, epochs: p.fclEpochs, batchSize: 16, warmupRatio: 0.1 } }],
  },
  {
    name: 'ace-sft',
    title: 'ACE-SFT: more SFT on the general corpus',
    paper: 'Paper ACE-SFT: SFT on ToolACE converted to the same format (a general corpus, not the benchmark\'s tasks). ' +
      'Here: further epochs on the ToolACE stand-in corpus from the base checkpoint, at SFT_LR_HIGH.',
    init: { kind: 'checkpoint', path: BASE_CHECKPOINT },
    stages: (p) => [{ kind: 'sft', data: 'corpus', config: { lr: SFT_LR_HIGH, epochs: p.fclEpochs, batchSize: 16, warmupRatio: 0.1 } }],
  },
  {
    name: 'vanilla-rl',
    title: 'Vanilla multi-turn GRPO from the base model',
    paper: 'Paper vanilla RL (official GRPO script for Qwen2.5-1.5B): group 8, clip 0.2, dual clip 3.0, k3 KL 1e-4, ' +
      'token-mean, temperature 1, lr constant after 10 warmup steps. Here: fewer prompts per step and steps per preset, lr RL_LR.',
    init: { kind: 'checkpoint', path: BASE_CHECKPOINT },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR } }],
  },
];

export function listExperiments(): ExperimentSpec[] {
  return EXPERIMENTS.slice();
}

export function getExperiment(name: string): ExperimentSpec {
  const spec = EXPERIMENTS.find((e) => e.name === name);
  if (!spec) {
    throw new Error(`unknown config "${name}" (known: ${EXPERIMENTS.map((e) => e.name).join(', ')})`);
  }
  return spec;
}
