/**
 * Multi-turn GRPO (docs/design.md A.4): one `step()` = sample `promptsPerStep` training tasks, roll out
 * `groupSize` episodes of each at temperature 1, score them with the binary checker reward, compute group
 * advantages, then update the policy with the clipped (dual-clip) PPO loss + k3 KL in mini-batches.
 *
 * The data flows one way: rollout -> trajectories -> advantages -> mini-batches -> update -> record. Synchronous
 * supervisory signals (OPS, HBG, per-update SFT; docs/design.md A.6) plug in through `SyncSignal` (signal.ts): a
 * hint or a script is decided before the rollout, and the rollout itself records what training must see. The
 * paper's instruments (instruments.ts) observe the step and never change it (`instruments: false` leaves them out;
 * the update is the same). Writing records, validation and the memorisation measure belong to the caller
 * (lib/experiments/run/stages.ts), which schedules them.
 */
import { Rng } from '../../prng';
import { GPT } from '../../model/gpt';
import { Tokenizer } from '../../format/tokenizer';
import { TOOL_CALL_OPEN } from '../../format/tokens';
import { Task } from '../../envs/task';
import { Episode } from '../../envs/episode';
import { AdamW } from '../optim';
import { constantWithWarmup } from '../schedule';
import { rollout, RolloutConfig } from '../rollout';
import { ScriptedRow, Trajectory } from '../trajectory';
import { GRPOStepRecord } from '../records';
import { probeContexts, probeTokenIds } from '../../diagnostics/probe';
import { grpoAdvantages } from './advantages';
import { GRPOConfig, validateGRPOConfig } from './config';
import { disposeMiniBatches, prepareMiniBatches } from './prepare';
import { UpdateStats, updateMiniBatch } from './update';
import { probeFields, rolloutFields, splitFields, splitReadRequest, stateFields, updateFields } from './instruments';
import { SyncSignal } from './signal';
import { PipelineConfig, defaultPipelineConfig } from '../pipeline';

export interface TrainerArgs {
  model: GPT;
  /** The frozen reference policy for the KL term (the starting checkpoint); null disables KL. */
  ref: GPT | null;
  tokenizer: Tokenizer;
  trainTasks: Task[];
  /** The probe reads its prompts from these (the first `probeTasks`). */
  valTasks: Task[];
  config: GRPOConfig;
  signal?: SyncSignal;
  /** Measure the probe, the gradient split and the message states (default true); off, those fields are NaN. */
  instruments?: boolean;
  /** The paper's pipeline differences (lib/train/pipeline.ts); default all off, the exact pipeline. */
  pipeline?: PipelineConfig;
}

/** The trainer's mutable state that a checkpoint must hold for an exact resume. */
export interface TrainerState {
  step: number;
  rngState: number;
  /** Step at which the current optimizer (and its warmup) started. */
  optimizerStart: number;
  /** Ids of the training tasks drawn so far (absent in resume states of before the memorisation measure). */
  seen?: string[];
}

/** What one step made: its record (without validation: the caller's schedule) and its rollouts, group after group. */
export interface StepOutput {
  record: GRPOStepRecord;
  trajs: Trajectory[];
}

/**
 * The sampler's settings of a GRPO config: temperature sampling within its budgets (shared by every sampled rollout).
 */
export function samplingConfig(cfg: GRPOConfig): Partial<RolloutConfig> {
  return { temperature: cfg.temperature, greedy: false, maxMessageTokens: cfg.maxMessageTokens,
    maxContext: cfg.maxContext };
}

export class GRPOTrainer {
  readonly config: GRPOConfig;
  readonly model: GPT;
  opt: AdamW;
  stepIndex = 0;
  private optimizerStart = 0;
  readonly rng: Rng;
  private readonly probeCtx: number[][];
  private readonly schedule: (s: number) => number;
  /** Training tasks drawn so far, in first-draw order. */
  private readonly seenIds = new Set<string>();
  private readonly pipeline: PipelineConfig;

  constructor(private readonly args: TrainerArgs) {
    validateGRPOConfig(args.config);
    if (args.trainTasks.length < args.config.promptsPerStep) {
      throw new Error(`grpo: ${args.trainTasks.length} training tasks < promptsPerStep ${args.config.promptsPerStep}`);
    }
    this.config = args.config;
    this.pipeline = args.pipeline ?? defaultPipelineConfig;
    this.model = args.model;
    this.rng = new Rng(args.config.seed);
    this.opt = new AdamW(args.model.params(), { weightDecay: args.config.weightDecay,
      maxGradNorm: args.config.maxGradNorm });
    this.schedule = constantWithWarmup(args.config.lr, args.config.warmupSteps);
    // probe prompts: system + first user turn of a fixed slice of the validation tasks
    const probeTasks = args.valTasks.slice(0, Math.min(args.config.probeTasks, args.valTasks.length));
    this.probeCtx = probeContexts(args.tokenizer, probeTasks.map((t) => new Episode(t).initialMessages()));
  }

  getState(): TrainerState {
    return { step: this.stepIndex, rngState: this.rng.getState(), optimizerStart: this.optimizerStart,
      seen: [...this.seenIds] };
  }

  setState(s: TrainerState): void {
    this.stepIndex = s.step;
    this.rng.setState(s.rngState);
    this.optimizerStart = s.optimizerStart ?? 0;
    this.seenIds.clear();
    for (const id of s.seen ?? []) this.seenIds.add(id);
  }

  /** The learning rate of RL step `stepNo` (1-based), warmup counted from the optimizer's start. */
  lrOfStep(stepNo: number): number {
    return this.schedule(stepNo - 1 - this.optimizerStart);
  }

  /** Ids of the training tasks drawn so far (the memorisation measure's "seen" side). */
  get seen(): ReadonlySet<string> {
    return this.seenIds;
  }

  /**
   * A fresh optimizer whose warmup starts at the next step (after an SFT phase: the paper restarts AdamW
   * with 5 warmup steps for every RL stage of the interleaved schemes).
   */
  resetOptimizer(): void {
    this.opt.dispose();
    this.opt = new AdamW(this.model.params(), { weightDecay: this.config.weightDecay,
      maxGradNorm: this.config.maxGradNorm });
    this.optimizerStart = this.stepIndex;
  }

  /**
   * Sample the step's groups and roll them out: `promptsPerStep` tasks x `groupSize` rollouts, laid out group after
   * group, each planned by the signal (a hint, a script, or plain sampling).
   */
  private sampleGroups(): { tasks: Task[]; trajs: Trajectory[]; seconds: number } {
    const cfg = this.config;
    const tok = this.args.tokenizer;
    const tasks = this.rng.sample(this.args.trainTasks, cfg.promptsPerStep);
    for (const t of tasks) this.seenIds.add(t.id);
    const episodes: Episode[] = [];
    const scripts: (ScriptedRow | undefined)[] = [];
    for (const task of tasks) {
      for (let i = 0; i < cfg.groupSize; i++) {
        const plan = this.args.signal?.plan ? this.args.signal.plan(task, i) : {};
        // HBG: the episode samples with the hint, and its trajectory records the hint-free prompt (rollout_row.ts)
        episodes.push(new Episode(task, { syntax: 'json', maxAssistantMessages: cfg.maxAssistantMessages,
          hint: plan.hint,
          closedCallsOnly: this.pipeline.closedCallsOnly }));
        scripts.push(plan.script);
      }
    }
    const t0 = Date.now();
    const trajs = rollout(this.model, tok, episodes, {
      rng: this.rng.fork(),
      scripts,
      config: { ...samplingConfig(cfg), sharePrompts: cfg.sharePrompts },
      pipeline: this.pipeline,
      probeRead: this.instrumented ? { prefix: [tok.id(TOOL_CALL_OPEN), tok.id('\n')],
        tokens: probeTokenIds(tok) } : undefined,
    });
    return { tasks, trajs, seconds: (Date.now() - t0) / 1000 };
  }

  private get instrumented(): boolean {
    return this.args.instruments ?? true;
  }

  /**
   * One RL step, as the algorithm reads: roll out the groups, score them, compute group advantages, prepare the
   * mini-batches (old and reference log-probs), update the policy; then the instruments (instruments.ts) observe it.
   */
  step(): StepOutput {
    const cfg = this.config;
    const tok = this.args.tokenizer;
    const stepNo = this.stepIndex + 1;
    const { tasks, trajs, seconds: rolloutSeconds } = this.sampleGroups();
    const rewards = trajs.map((t) => t.reward); // [promptsPerStep * groupSize], binary checker reward
    // [promptsPerStep * groupSize], (r - group mean) / (group std + eps)
    const adv = grpoAdvantages(rewards, cfg.groupSize);

    const t1 = Date.now();
    const probeIds = probeTokenIds(tok);
    const reads = this.instrumented ? splitReadRequest(tok, probeIds, cfg.maxContext) : undefined;
    const prep = prepareMiniBatches({
      model: this.model, ref: this.args.ref, trajs, advantages: adv, groupSize: cfg.groupSize,
      promptsPerMiniBatch: cfg.promptsPerMiniBatch, maxContext: cfg.maxContext, microBatchTokens: cfg.microBatchTokens,
      sharePrompts: cfg.sharePrompts, reads,
    });
    // the signal's extra loss data per mini-batch (the per-update SFT loss), built outside the gradient scope
    const extras = prep.minibatches.map((mb) =>
      this.args.signal?.prepareExtra?.(tasks.slice(mb.firstGroup, mb.firstGroup + cfg.promptsPerMiniBatch)) ?? null);
    try {
      const lr = this.schedule(this.stepIndex - this.optimizerStart);
      const updates: UpdateStats[] = [];
      // ppoEpochs = 1 in the paper: one pass over the mini-batches
      for (let epoch = 0; epoch < cfg.ppoEpochs; epoch++) {
        prep.minibatches.forEach((mb, i) => {
          updates.push(updateMiniBatch(this.model, this.opt, mb,
            { ...cfg, microBatchWeights: this.pipeline.microBatchWeights }, lr,
            { signal: this.args.signal, extra: extras[i], stepNo }));
        });
      }
      // tokens the update reads: each micro-batch, plus each mini-batch's shared prompts (read once per epoch)
      const perEpoch = prep.minibatches.reduce((a, mb) =>
        a + (mb.prefix?.ids.size ?? 0) + mb.micro.reduce((b, m) => b + m.batch.inputs.size, 0), 0);
      const trainSeconds = (Date.now() - t1) / 1000;
      this.stepIndex = stepNo;

      const record: GRPOStepRecord = {
        step: stepNo,
        lr,
        ...rolloutFields(trajs, rewards, cfg.groupSize, rolloutSeconds),
        ...updateFields(updates, perEpoch * cfg.ppoEpochs, trainSeconds),
        entropy: prep.entropy,
        ...(reads ? probeFields(this.model, tok, this.probeCtx) : NO_PROBE),
        ...(reads ? splitFields(trajs, adv, prep.reads, reads, tok) : NO_SPLIT),
        ...(reads ? stateFields(trajs) : NO_STATES),
      };
      return { record, trajs };
    } finally {
      disposeMiniBatches(prep.minibatches);
      for (const e of extras) e?.dispose();
    }
  }

  dispose(): void {
    this.opt.dispose();
  }
}

/** The instrument fields of a step measured without instruments (TrainerArgs.instruments false). */
const NO_PROBE = { pJsonOpen: NaN, pImEnd: NaN, pToolCall: NaN };
const NO_SPLIT = { splitPositions: 0, selfJsonOpen: NaN, otherJsonOpen: NaN, selfImEnd: NaN, otherImEnd: NaN,
  selfToolCall: NaN,
  otherToolCall: NaN };
const NO_STATES = { healthyCall: NaN, healthyResponse: NaN, pollution: NaN, fullCollapse: NaN };
