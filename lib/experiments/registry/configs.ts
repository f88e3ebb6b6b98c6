/**
 * The registry of named experiments: an index of the paper. Each entry says which method or official
 * script it mirrors (docs/design.md A.4, A.6) and what differs at our scale. Learning rates are ours (a ~0.25M
 * parameter model needs far larger steps than the paper's 1.5B model); their 10x ratios follow the paper.
 */
import { ExperimentSpec, rlSizes, StageSpec } from './spec';
import { Preset } from './presets';
import { defaultGRPOConfig } from '../../train/grpo/config';
import { REGIME_TABLE } from './regimes';
import type { PipelineConfig } from '../../train/pipeline';

/** The strong regime's base checkpoint (the default one; each regime names its own in regimes.ts). */
export const BASE_CHECKPOINT = REGIME_TABLE.strong.base;

/** The general-corpus stage both bases start with: the ToolACE stand-in, from scratch. */
const corpusStage = (p: Preset): StageSpec =>
  ({ kind: 'sft', data: 'corpus', config: { lr: 3e-3, epochs: p.baseEpochs, batchSize: 16, warmupRatio: 0.05 } });

/**
 * Share of the corpus's JSON tool conversations cut at an empty call in the base variant (instruct-imend): small, as
 * in a general instruct model's data, set before it was trained; its calibration is measured, not targeted.
 */
const EMPTY_CALL_SHARE = 0.05;

/** World dialogues per training category, and epochs, of the instruct base's second stage (calibrated). */
const INSTRUCT_WORLD_DIALOGUES = 60;
const INSTRUCT_EPOCHS = 8;

/** SFT learning rates: the paper's 1e-5 ("high") and 1e-6 ("low") scaled for the tiny model, ratio kept. */
export const SFT_LR_HIGH = 1e-3;
export const SFT_LR_LOW = 1e-4;
/** GRPO learning rate of the main runs (the paper's 1e-6, scaled; see the LR sweep in the README). */
export const RL_LR = defaultGRPOConfig.lr;

const EXPERIMENTS: ExperimentSpec[] = [
  {
    name: 'base',
    label: 'Base (strong)',
    group: 'base',
    title: 'Base "instruct" model: SFT from scratch on the general corpus',
    paper: 'Stands in for Qwen2.5-1.5B-Instruct: a policy with general tool-use skill and a little in-domain ' +
      'exposure ' +
      '(the paper starts every run from the released instruct checkpoint; we build ours from the ToolACE-like corpus ' +
      'plus 4,500 generated world dialogues outside the train and test splits).',
    init: { kind: 'scratch' },
    stages: (p) => [
      corpusStage(p),
      // The corpus alone gave 0% ID accuracy (greedy; ~37% healthy calls): a 0.3M-parameter model does not
      // transfer from other APIs to multi-turn world tasks. An instruct model has seen some in-domain dialogues:
      // generated world tasks of the training categories, in neither the train nor the test split, with some
      // of the general corpus replayed. Calibrated (`toolrl calibrate`, docs/design.md B): 300 per category x 4
      // epochs left 3% sampled success and 84% of GRPO groups without signal; 1000 x 8 epochs gave 18% sampled
      // success but only 33% of groups with mixed rewards and 0% on both OOD sets (no replay); the README's
      // calibration table lists each attempt.
      { kind: 'sft', data: 'world-sample', count: 1500, replay: 1500,
        config: { lr: 1e-3, epochs: 8, batchSize: 16, warmupRatio: 0.1 } },
    ],
  },
  {
    name: 'instruct',
    label: 'Base (instruct)',
    group: 'base',
    title: 'Instruct base in the paper\'s position: the general corpus plus a few world dialogues',
    paper: 'Stands in for Qwen2.5-1.5B-Instruct as the paper finds it: it knows the tool-call format (general ' +
      'tool-use ' +
      'tuning) but hardly the benchmark\'s tasks (3.50 on BFCL-V3 multi-turn). The instruct regime (regimes.ts) ' +
        'starts here.',
    init: { kind: 'scratch' },
    stages: (p) => [
      corpusStage(p),
      // Calibrated with `toolrl calibrate` against the instruct regime's pre-registered targets; every attempt
      // is listed in data/checkpoints/instruct/README.md.
      { kind: 'sft', data: 'world-sample', count: INSTRUCT_WORLD_DIALOGUES, replay: INSTRUCT_WORLD_DIALOGUES * 3,
        config: { lr: 1e-3, epochs: INSTRUCT_EPOCHS, batchSize: 16, warmupRatio: 0.1 } },
    ],
  },
  {
    name: 'instruct-imend',
    label: 'Base (instruct, empty calls)',
    group: 'base',
    title: 'The instruct base\'s recipe on a corpus where a few conversations end in an empty call',
    paper: 'Not a row of the paper: the base variant of the pipeline study (docs/design.md E.3). The instruct ' +
      'recipe, with ' +
      `${100 * EMPTY_CALL_SHARE}% of the general corpus's JSON tool conversations cut at a tool-call message made a ` +
        `bare ` +
      '<tool_call>\\n (lib/envs/corpus.ts withEmptyCalls), so that <|im_end|> can follow the tag, as a general ' +
        'instruct ' +
      'model has seen; committed as data/checkpoints/instruct-imend.',
    init: { kind: 'scratch' },
    stages: (p) => [
      { ...corpusStage(p), emptyCalls: EMPTY_CALL_SHARE },
      { kind: 'sft', data: 'world-sample', count: INSTRUCT_WORLD_DIALOGUES, replay: INSTRUCT_WORLD_DIALOGUES * 3,
        emptyCalls: EMPTY_CALL_SHARE,
        config: { lr: 1e-3, epochs: INSTRUCT_EPOCHS, batchSize: 16, warmupRatio: 0.1 } },
    ],
  },
  {
    name: 'base-model',
    label: 'Base',
    group: 'method',
    title: 'The base checkpoint itself, evaluated (no training)',
    paper: 'Paper row "Base": Qwen2.5-1.5B-Instruct as released. Here: the regime\'s base checkpoint.',
    init: { kind: 'base' },
    stages: () => [],
  },
  {
    name: 'fcl-sft',
    label: 'FCL-SFT (lr high)',
    group: 'method',
    title: 'FCL-SFT (lr high): SFT on teacher trajectories of the training tasks',
    paper: 'Paper FCL-SFT: teacher trajectories of the 300 training tasks, lr 1e-5, 3 epochs, batch 128, cosine, ' +
      'warmup 0.1. ' +
      'Here: lr scaled to SFT_LR_HIGH, batch 16 conversations (all assistant messages of a conversation in one ' +
        'sequence).',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'sft', data: 'teacher-train', config: { lr: SFT_LR_HIGH, epochs: p.fclEpochs,
      batchSize: 16, warmupRatio: 0.1 } }],
  },
  {
    name: 'fcl-sft-lowlr',
    label: 'FCL-SFT (lr low)',
    group: 'method',
    title: 'FCL-SFT (lr low): the same with a 10x smaller learning rate',
    paper: 'Paper FCL-SFT at lr 1e-6 (the learning-rate comparison of docs/design.md A.7). Here: SFT_LR_LOW = ' +
      'SFT_LR_HIGH / 10.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'sft', data: 'teacher-train', config: { lr: SFT_LR_LOW, epochs: p.fclEpochs, batchSize: 16,
      warmupRatio: 0.1 } }],
  },
  {
    name: 'fcl-sft-8x',
    label: 'FCL-SFT (8x epochs)',
    group: 'sft-dose',
    title: 'FCL-SFT (lr high) for eight times the epochs: does more supervision open the paper\'s gap?',
    paper: 'Not a row of the paper. Its supervised rows gain +14 to +22 points over its base; from the instruct base ' +
      'FCL-SFT at the paper\'s 3 epochs gains ~2. Same data and lr as fcl-sft, 8 x the epochs: a dose check of that ' +
      'shortfall (Table "SFT dose"), not a method.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'sft', data: 'teacher-train', config: { lr: SFT_LR_HIGH, epochs: 8 * p.fclEpochs,
      batchSize: 16, warmupRatio: 0.1 } }],
  },
  {
    name: 'fcl-sft-5x',
    label: 'FCL-SFT (5x data)',
    group: 'sft-dose',
    title: 'FCL-SFT (lr high) on five times the teacher conversations: the 300 training tasks plus 1,200 generated ' +
      'ones',
    paper: 'Not a row of the paper. Is the instruct base\'s small gain from FCL-SFT a matter of data? The 300 ' +
      'training tasks\' ' +
      'teacher conversations plus 400 per category of generated world tasks (in neither split), same lr and epochs ' +
        'as fcl-sft.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'sft', data: 'teacher-train', extraWorld: 4 *
      (p.trainTaskLimit > 0 ? Math.ceil(p.trainTaskLimit / 3) : 100),
      config: { lr: SFT_LR_HIGH, epochs: p.fclEpochs, batchSize: 16, warmupRatio: 0.1 } }],
  },
  {
    name: 'instruct-wide',
    label: 'Base (instruct, d128)',
    group: 'base',
    title: 'The instruct base\'s recipe on a wider model (d128 instead of d64)',
    paper: 'Not a row of the paper: the start of fcl-sft-wide. The instruct recipe (general corpus, then 60 world ' +
      'dialogues per ' +
      'category with corpus replay) from scratch at twice the width.',
    init: { kind: 'scratch', model: { nEmbd: 128 } },
    stages: (p) => [
      corpusStage(p),
      { kind: 'sft', data: 'world-sample', count: INSTRUCT_WORLD_DIALOGUES, replay: INSTRUCT_WORLD_DIALOGUES * 3,
        config: { lr: 1e-3, epochs: INSTRUCT_EPOCHS, batchSize: 16, warmupRatio: 0.1 } },
    ],
  },
  {
    name: 'fcl-sft-wide',
    label: 'FCL-SFT (d128 model)',
    group: 'sft-dose',
    title: 'FCL-SFT (lr high) on the 300 teacher conversations from the wider instruct base',
    paper: 'Not a row of the paper. Is the small gain from FCL-SFT a matter of model size? fcl-sft\'s data and ' +
      'recipe from ' +
      'instruct-wide (d128), to set beside fcl-sft-5x (more data, same model).',
    init: { kind: 'experiment', name: 'instruct-wide' },
    stages: (p) => [{ kind: 'sft', data: 'teacher-train', config: { lr: SFT_LR_HIGH, epochs: p.fclEpochs,
      batchSize: 16, warmupRatio: 0.1 } }],
  },
  {
    name: 'ace-sft',
    label: 'ACE-SFT',
    group: 'method',
    title: 'ACE-SFT: more SFT on the general corpus',
    paper: 'Paper ACE-SFT: SFT on ToolACE converted to the same format (a general corpus, not the benchmark\'s ' +
      'tasks). ' +
      'Here: further epochs on the ToolACE stand-in corpus from the base checkpoint, at SFT_LR_HIGH.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'sft', data: 'corpus', config: { lr: SFT_LR_HIGH, epochs: p.fclEpochs, batchSize: 16,
      warmupRatio: 0.1 } }],
  },
  {
    name: 'vanilla-rl',
    label: 'Vanilla RL',
    group: 'method',
    sweepLr: RL_LR,
    title: 'Vanilla multi-turn GRPO from the base model',
    paper: 'Paper vanilla RL (official GRPO script for Qwen2.5-1.5B): group 8, clip 0.2, dual clip 3.0, k3 KL 1e-4, ' +
      'token-mean, temperature 1, lr constant after 10 warmup steps. Here: fewer prompts per step and steps per ' +
        'preset, lr RL_LR.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR } }],
  },
];


/** The paper's interleaved stage lengths 50 : 100 : 150 (of 300 RL steps), scaled to the preset. */
export function interleavedSteps(total: number): [number, number, number] {
  const a = Math.max(1, Math.round(total / 6));
  const b = Math.max(1, Math.round(total / 3));
  return [a, b, Math.max(1, total - a - b)];
}

/** Steps of rollout records an interleaved SFT phase reads. Paper: the last 10 RL steps (ETS, PRS). */
export const INTERLEAVE_LAST_STEPS = 10;

/** The SFT phase of the interleaved schemes and the guard. Paper: 2 epochs, warmup ratio 0.3; ours: batch 16. */
const INTERLEAVED_SFT = (lr: number) => ({ lr, epochs: 2, warmupRatio: 0.3, batchSize: 16 });

/** RL stage -> SFT phase -> RL -> SFT -> RL, fresh optimizer and 5 warmup steps per RL stage (docs/design.md A.6). */
function interleavedStages(p: Preset, source: 'ets' | 'prs', sftLr: number): StageSpec[] {
  const [a, b, c] = interleavedSteps(p.rlSteps);
  const rl = (steps: number): StageSpec => ({ kind: 'grpo', config: { ...rlSizes(p), steps, lr: RL_LR,
    warmupSteps: 5 } });
  const sft: StageSpec = { kind: 'sft-interleaved', source, lastSteps: INTERLEAVE_LAST_STEPS,
    config: INTERLEAVED_SFT(sftLr) };
  return [rl(a), sft, rl(b), sft, rl(c)];
}

const GRPO_NOTE = 'group 8, clip 0.2, dual clip 3.0, k3 KL 1e-4, token-mean, temperature 1';

EXPERIMENTS.push(
  {
    name: 'fcl-sft-rl', label: 'FCL-SFT -> RL', group: 'method',
    title: 'GRPO starting from the FCL-SFT checkpoint',
    paper: `Paper SFT->RL: GRPO from an SFT checkpoint (${GRPO_NOTE}). Here: from this preset and seed's fcl-sft run.`,
    init: { kind: 'experiment', name: 'fcl-sft' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR } }],
  },
  {
    name: 'ace-sft-rl', label: 'ACE-SFT -> RL', group: 'method',
    title: 'GRPO starting from the ACE-SFT checkpoint',
    paper: `Paper ACE-SFT->RL (${GRPO_NOTE}). Here: from this preset and seed's ace-sft run.`,
    init: { kind: 'experiment', name: 'ace-sft' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR } }],
  },
  {
    name: 'ops', label: 'OPS', group: 'method',
    title: 'Off-policy supervision: rollout 0 of each group replaced by the ground truth',
    paper: 'Paper OPS (synchronous): GT assistant messages replace rollout 0 message by message, executed in the ' +
      'env, plain GRPO loss.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR }, signal: { kind: 'ops' } }],
  },
  {
    name: 'ops-luffy', label: 'OPS (LUFFY weights)', group: 'method',
    title: 'OPS with off-policy tokens weighted by p/(p+0.1) instead of the ratio',
    paper: 'The official code\'s LUFFY-style variant of OPS (off by default there): policy shaping p/(p+0.1), gamma ' +
      '0.1.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR },
      signal: { kind: 'ops', config: { luffyGamma: 0.1 } } }],
  },
  {
    name: 'hbg', label: 'HBG', group: 'method',
    title: 'Hint-based guidance: a GT summary in the system prompt of rollouts 0 and 1 while sampling',
    paper: 'Paper HBG (synchronous): hint appended to the system prompt for rollouts 0, 1 during sampling only; ' +
      'training on the hint-free context.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR }, signal: { kind: 'hbg' } }],
  },
  {
    name: 'sync-sft', label: 'Sync SFT loss', group: 'method',
    title: 'GRPO with a per-update SFT loss (weight 1.0) on the batch\'s teacher trajectories',
    paper: 'The official code\'s synchronous per-update SFT loss, weight 1.0: the synchronous counterpart of ' +
      'interleaving.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR },
      signal: { kind: 'sync-sft', config: { weight: 1.0 } } }],
  },
  {
    name: 'ets', label: 'ETS (SFT lr low)', group: 'method',
    title: 'Erroneous-trajectory supervision, interleaved RL 50 : SFT : RL 100 : SFT : RL 150',
    paper: 'Paper ETS: SFT 2 epochs (lr 1e-6, warmup 0.3) on teacher trajectories of tasks that failed in the last ' +
      '10 RL steps. ' +
      'Here: SFT lr SFT_LR_LOW, stage lengths scaled to the preset.',
    init: { kind: 'base' },
    stages: (p) => interleavedStages(p, 'ets', SFT_LR_LOW),
  },
  {
    name: 'ets-difflr', label: 'ETS (SFT lr high)', group: 'method',
    title: 'ETS with the 10x higher SFT learning rate ("difflr")',
    paper: 'Paper ETS "difflr" variant: SFT lr 1e-5. Here: SFT_LR_HIGH.',
    init: { kind: 'base' },
    stages: (p) => interleavedStages(p, 'ets', SFT_LR_HIGH),
  },
  {
    name: 'prs', label: 'PRS', group: 'method',
    title: 'Process-reflection supervision: judge reflections + ETS data between RL stages',
    paper: 'Paper PRS: an LLM judge writes turn-by-turn reflections on one rollout per group of the last 10 steps; ' +
      'SFT on ' +
      '(judge prompt -> reflection) jointly with ETS data, lr 1e-5. Here: a rule-based judge (lib/envs/judge.ts), ' +
        'SFT_LR_HIGH.',
    init: { kind: 'base' },
    stages: (p) => interleavedStages(p, 'prs', SFT_LR_HIGH),
  },
  {
    name: 'guard', label: 'Collapse guard', group: 'extra',
    title: 'Beyond the paper: ETS-style SFT phases triggered by the probe or the full-collapse share',
    paper: 'Not in the paper. Same data and SFT recipe as ETS (lr SFT_LR_LOW, 2 epochs, warmup 0.3), but an SFT ' +
      'phase starts when ' +
      'p(<|im_end|> after <tool_call>\\n) >= 0.25, p({" after <tool_call>\\n) < 0.9 or the full-collapse share of a ' +
        'step\'s messages >= 0.25 (at most 2 phases, 10 steps apart). ' +
      'Compare with ets, its fixed-schedule counterpart.',
    init: { kind: 'base' },
    stages: (p) => [{
      kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR, warmupSteps: 5 },
      guard: { sft: INTERLEAVED_SFT(SFT_LR_LOW) },
    }],
  },
);

/** "lr1e-3": how a config name carries its learning rate. */
function rateTag(lr: number): string {
  return `lr${lr.toExponential(0).replace('+', '')}`;
}

/**
 * The learning-rate sweep of vanilla GRPO (docs/design.md B: report every rate, including those that do not collapse).
 * The sweep's point at RL_LR is vanilla-rl itself (its `sweepLr`), so the configs below are the other rates.
 */
export const LR_SWEEP_RATES = [1e-4, 3e-4, 1e-3, 3e-3];
export const LR_SWEEP = LR_SWEEP_RATES.filter((lr) => lr !== RL_LR);
for (const lr of LR_SWEEP) {
  EXPERIMENTS.push({
    name: `vanilla-rl-${rateTag(lr)}`, label: `lr ${lr.toExponential(0)}`, group: 'lr-sweep', sweepLr: lr,
    title: `Vanilla GRPO at learning rate ${lr.toExponential(0)}`,
    paper: 'The paper compares learning rates (docs/design.md A.7: lr modulates collapse). Same recipe as ' +
      'vanilla-rl, other lr.',
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr } }],
  });
}

/**
 * The learning rate at which vanilla GRPO collapses from the calibrated base (full preset, both seeds: validation
 * below a quarter of the base's from step 20 on, final ID 4% and 0%, while the main rate holds 25-34%; README). The
 * paper's claim that SFT restores stability
 * can only be tested where there is an instability, so the supervisory signals run here too, as the
 * 'collapse-rate' group (compared with vanilla-rl-lr1e-3, the sweep's point at this rate).
 */
export const COLLAPSE_LR = 1e-3;
const COLLAPSE_SIGNALS = ['ops', 'ops-luffy', 'hbg', 'sync-sft', 'ets', 'ets-difflr', 'prs', 'guard'];
for (const name of COLLAPSE_SIGNALS) {
  const main = EXPERIMENTS.find((e) => e.name === name)!;
  EXPERIMENTS.push({
    ...main, name: `${name}-${rateTag(COLLAPSE_LR)}`, label: `${main.label}, lr ${COLLAPSE_LR.toExponential(0)}`,
    group: 'collapse-rate', mainRate: name,
    title: `${main.title}, at the collapse rate ${COLLAPSE_LR.toExponential(0)}`,
    paper: `${main.paper} Here at lr ${COLLAPSE_LR.toExponential(0)}, where vanilla RL collapses.`,
    stages: (p) => main.stages(p).map((st) => (st.kind === 'grpo' ?
      { ...st, config: { ...st.config, lr: COLLAPSE_LR } } : st)),
  });
}

/**
 * The pipeline pilots (docs/design.md E), the study of the `pipeline` preset (the paper's 300 RL steps): vanilla
 * GRPO at the main rate, the lab's exact pipeline first (the recipe of vanilla-rl, twice as long).
 */
EXPERIMENTS.push({
  name: 'pipeline-exact', label: 'Exact pipeline', group: 'pipeline',
  title: 'Vanilla GRPO on the lab\'s exact pipeline (every trained token the sampled one, one precision)',
  paper: `Paper vanilla RL (${GRPO_NOTE}) at its 300 steps (the pipeline preset). Here: lr RL_LR.`,
  init: { kind: 'base' },
  stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR } }],
});

/** One pilot per difference of the paper's pipeline (docs/design.md E.1), then all of them together. */
const PIPELINE_PILOTS: { name: string; label: string; what: string; options: Partial<PipelineConfig> }[] = [
  { name: 'closed-calls', label: 'E1 closed calls only', options: { closedCallsOnly: true },
    what: 'a bare <tool_call> is a reply that ends the turn, as in the paper\'s tool server (fcl_interface.py:39-61)' },
  { name: 'retokenize', label: 'E2 re-tokenised text', options: { retokenize: true },
    what: 'each message decoded with special tokens skipped, <|im_end|> appended, encoded again (manager.py:198-248)' },
  { name: 'cut-end', label: 'E3 trained cut end', options: { trainCutEnd: true },
    what: 'the <|im_end|> appended to a message cut at the cap is trained (manager.py:240-242, 540)' },
  { name: 'bf16', label: 'E4 bf16 sampler', options: { bf16Sampler: true },
    what: 'sampling from bf16-rounded logits, old log-probs recomputed in float32, no correction (rollout.yaml:26)' },
  { name: 'microbatch', label: 'E5 micro-batch weights', options: { microBatchWeights: true },
    what: 'each micro-batch\'s token-mean weighted by its share of rows, veRL\'s dynamic batch size ' +
      '(dp_actor.py:909-911)' },
  { name: 'all', label: 'E1-E5 together', options: { closedCallsOnly: true, retokenize: true, trainCutEnd: true,
    bf16Sampler: true,
    microBatchWeights: true },
      what: 'every difference E1-E5 at once, the paper\'s pipeline as far as the lab can mirror it' },
];
/**
 * The base variant whose runner-up after `<tool_call>\n` is `<|im_end|>` (docs/design.md E.3; configs
 * `instruct-imend`).
 */
export const IMEND_BASE = 'data/checkpoints/instruct-imend';
for (const [suffix, lr] of [['', RL_LR], [`-${rateTag(COLLAPSE_LR)}`, COLLAPSE_LR]] as [string, number][]) {
  EXPERIMENTS.push({
    name: `pipeline-imend-base${suffix}`, label: `Empty-call base${suffix ? `, lr ${lr.toExponential(0)}` : ''}`,
      group: 'pipeline',
    title: `Vanilla GRPO from the base whose runner-up after <tool_call>\\n is <|im_end|>, lr ${lr.toExponential(0)}`,
    paper: `Paper vanilla RL (${GRPO_NOTE}) at its 300 steps, on the exact pipeline, from ${IMEND_BASE} (5% of ` +
      'its corpus\'s JSON tool conversations end in an empty call). Does the collapse follow the base\'s runner-up?',
    init: { kind: 'checkpoint', path: IMEND_BASE },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr } }],
  });
}
for (const pilot of PIPELINE_PILOTS) {
  EXPERIMENTS.push({
    name: `pipeline-${pilot.name}`, label: pilot.label, group: 'pipeline', pipeline: pilot.options,
    title: `Vanilla GRPO with the paper's pipeline difference: ${pilot.what}`,
    paper: `Paper vanilla RL (${GRPO_NOTE}) at its 300 steps, with ${pilot.what}. Here: lr RL_LR.`,
    init: { kind: 'base' },
    stages: (p) => [{ kind: 'grpo', config: { ...rlSizes(p), lr: RL_LR } }],
  });
}

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
