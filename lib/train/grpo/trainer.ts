/**
 * Multi-turn GRPO (docs/design.md A.4): one `step()` = sample `promptsPerStep` training tasks, roll out
 * `groupSize` episodes of each at temperature 1, score them with the binary checker reward, compute group
 * advantages, then update the policy with the clipped (dual-clip) PPO loss + k3 KL in mini-batches.
 *
 * Synchronous supervisory signals (OPS, HBG, per-update SFT; docs/design.md A.6) plug in through `SyncSignal`
 * (signal.ts) without touching this loop. Every step logs the paper's instruments (instruments.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { Rng } from '../../prng';
import { GPT } from '../../model/gpt';
import { Tokenizer } from '../../format/tokenizer';
import { TOOL_CALL_OPEN } from '../../format/tokens';
import { renderConversation, ASSISTANT_PREFIX } from '../../format/chat';
import { Task } from '../../envs/task';
import { Episode } from '../../envs/episode';
import { AdamW } from '../optim';
import { constantWithWarmup } from '../schedule';
import { rollout } from '../rollout';
import { ScriptedRow, Trajectory } from '../trajectory';
import { evaluateModel, EvalResult } from '../evaluate';
import { MetricsSink } from '../metrics';
import { GRPOStepRecord, PerCategoryAccuracy, RolloutRecord } from '../records';
import { probeContexts, probeTokenIds } from '../../diagnostics/probe';
import { grpoAdvantages } from './advantages';
import { GRPOConfig, validateGRPOConfig } from './config';
import { disposeMiniBatches, prepareMiniBatches } from './prepare';
import { UpdateStats, updateMiniBatch } from './update';
import { mean, probeFields, rolloutFields, splitFields, stateFields, updateFields } from './instruments';
import { SyncSignal } from './signal';

export interface TrainerArgs {
  model: GPT;
  /** The frozen reference policy for the KL term (the starting checkpoint); null disables KL. */
  ref: GPT | null;
  tokenizer: Tokenizer;
  trainTasks: Task[];
  valTasks: Task[];
  config: GRPOConfig;
  signal?: SyncSignal;
  metrics?: MetricsSink<GRPOStepRecord>;
  /** Where to append the rollout records (task id, messages, reward, errorTurn); null = none. */
  stepRecordsFile?: string | null;
  /** The stage index written into every rollout record. */
  stage?: number;
  /** Tasks of the training distribution that RL never draws (the never-seen side of GRPOConfig.memoTasksPerCategory). */
  unseenTasks?: Task[];
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
  private readonly seen = new Set<string>();

  constructor(private readonly args: TrainerArgs) {
    validateGRPOConfig(args.config);
    if (args.trainTasks.length < args.config.promptsPerStep) {
      throw new Error(`grpo: ${args.trainTasks.length} training tasks < promptsPerStep ${args.config.promptsPerStep}`);
    }
    this.config = args.config;
    this.model = args.model;
    this.rng = new Rng(args.config.seed);
    this.opt = new AdamW(args.model.params(), { weightDecay: args.config.weightDecay, maxGradNorm: args.config.maxGradNorm });
    this.schedule = constantWithWarmup(args.config.lr, args.config.warmupSteps);
    // probe prompts: system + first user turn of a fixed slice of the validation tasks
    const probeTasks = args.valTasks.slice(0, Math.min(args.config.probeTasks, args.valTasks.length));
    this.probeCtx = probeContexts(args.tokenizer, probeTasks.map((t) => new Episode(t).initialMessages()));
  }

  getState(): TrainerState {
    return { step: this.stepIndex, rngState: this.rng.getState(), optimizerStart: this.optimizerStart, seen: [...this.seen] };
  }

  setState(s: TrainerState): void {
    this.stepIndex = s.step;
    this.rng.setState(s.rngState);
    this.optimizerStart = s.optimizerStart ?? 0;
    this.seen.clear();
    for (const id of s.seen ?? []) this.seen.add(id);
  }

  /**
   * A fresh optimizer whose warmup starts at the next step (after an SFT phase: the paper restarts AdamW
   * with 5 warmup steps for every RL stage of the interleaved schemes).
   */
  resetOptimizer(): void {
    this.opt.dispose();
    this.opt = new AdamW(this.model.params(), { weightDecay: this.config.weightDecay, maxGradNorm: this.config.maxGradNorm });
    this.optimizerStart = this.stepIndex;
  }

  /** Greedy validation on the validation tasks. */
  validate(): EvalResult {
    return evaluateModel(this.model, this.args.tokenizer, this.args.valTasks, {
      maxAssistantMessages: this.config.maxAssistantMessages,
      rollout: { maxMessageTokens: this.config.maxMessageTokens, maxContext: this.config.maxContext },
    });
  }

  /**
   * Memorisation vs generalisation: the sampled reward on `memoTasksPerCategory` training tasks per category drawn
   * before (a fresh choice each time) and on as many never-seen ones (the same each time), `memoGroupSize`
   * rollouts each. Its own PRNG stream, so the training samples do not depend on whether it runs.
   */
  memorisation(stepNo: number): { seen: number; unseen: number } | null {
    const cfg = this.config;
    const k = cfg.memoTasksPerCategory;
    const unseenPool = this.args.unseenTasks ?? [];
    if (k === 0 || unseenPool.length === 0) return null;
    const rng = new Rng(cfg.seed * 100_003 + stepNo);
    const cats = Array.from(new Set(unseenPool.map((t) => t.category)));
    const seenTasks = cats.flatMap((c) => {
      const drawn = this.args.trainTasks.filter((t) => t.category === c && this.seen.has(t.id));
      return rng.sample(drawn, Math.min(k, drawn.length));
    });
    const unseenTasks = cats.flatMap((c) => unseenPool.filter((t) => t.category === c).slice(0, k));
    const reward = (tasks: Task[]) => {
      if (tasks.length === 0) return NaN;
      const episodes = tasks.flatMap((t) => Array.from({ length: cfg.memoGroupSize }, () =>
        new Episode(t, { syntax: 'json', maxAssistantMessages: cfg.maxAssistantMessages })));
      const trajs = rollout(this.model, this.args.tokenizer, episodes, { rng: rng.fork(),
        config: { temperature: cfg.temperature, greedy: false, maxMessageTokens: cfg.maxMessageTokens, maxContext: cfg.maxContext } });
      return mean(trajs.map((t) => t.reward));
    };
    return { seen: reward(seenTasks), unseen: reward(unseenTasks) };
  }

  /**
   * Sample the step's groups and roll them out: `promptsPerStep` tasks x `groupSize` rollouts, laid out group after
   * group, each planned by the signal (a hint, a script, or plain sampling).
   */
  private sampleGroups(): { tasks: Task[]; trajs: Trajectory[]; hinted: boolean[]; seconds: number } {
    const cfg = this.config;
    const tok = this.args.tokenizer;
    const tasks = this.rng.sample(this.args.trainTasks, cfg.promptsPerStep);
    for (const t of tasks) this.seen.add(t.id);
    const episodes: Episode[] = [];
    const scripts: (ScriptedRow | undefined)[] = [];
    const hinted: boolean[] = [];
    for (const task of tasks) {
      for (let i = 0; i < cfg.groupSize; i++) {
        const plan = this.args.signal?.plan ? this.args.signal.plan(task, i) : {};
        episodes.push(new Episode(task, { syntax: 'json', maxAssistantMessages: cfg.maxAssistantMessages, hint: plan.hint }));
        scripts.push(plan.script);
        hinted.push(plan.hint !== undefined);
      }
    }
    const t0 = Date.now();
    const trajs = rollout(this.model, tok, episodes, {
      rng: this.rng.fork(),
      scripts,
      config: { temperature: cfg.temperature, greedy: false, maxMessageTokens: cfg.maxMessageTokens, maxContext: cfg.maxContext, sharePrompts: cfg.sharePrompts },
      probeRead: { prefix: [tok.id(TOOL_CALL_OPEN), tok.id('\n')], tokens: probeTokenIds(tok) },
    });
    const seconds = (Date.now() - t0) / 1000;
    // HBG: the hint was seen while sampling only; train on the hint-free prompt (docs/design.md A.6)
    trajs.forEach((t, i) => {
      if (hinted[i]) replacePrompt(t, tok.encode(renderPrompt(episodes[i].task)));
    });
    return { tasks, trajs, hinted, seconds };
  }

  /**
   * One RL step, as the algorithm reads: roll out the groups, score them, compute group advantages, prepare the
   * mini-batches (old and reference log-probs), update the policy; then the instruments (instruments.ts) and, every
   * `valEvery` steps, greedy validation. Returns the logged record.
   */
  step(): GRPOStepRecord {
    const cfg = this.config;
    const tok = this.args.tokenizer;
    const stepNo = this.stepIndex + 1;
    const { tasks, trajs, hinted, seconds: rolloutSeconds } = this.sampleGroups();
    const rewards = trajs.map((t) => t.reward); // [promptsPerStep * groupSize], binary checker reward
    const adv = grpoAdvantages(rewards, cfg.groupSize); // [promptsPerStep * groupSize], (r - group mean) / (group std + eps)

    const t1 = Date.now();
    const probeIds = probeTokenIds(tok);
    const prep = prepareMiniBatches({
      model: this.model, ref: this.args.ref, trajs, advantages: adv, hinted, groupSize: cfg.groupSize,
      promptsPerMiniBatch: cfg.promptsPerMiniBatch, maxContext: cfg.maxContext, microBatchTokens: cfg.microBatchTokens,
      sharePrompts: cfg.sharePrompts,
      openId: tok.id(TOOL_CALL_OPEN), newlineId: tok.id('\n'), probeIds,
    });
    // the signal's extra loss data per mini-batch (the per-update SFT loss), built outside the gradient scope
    const extras = prep.minibatches.map((mb) => this.args.signal?.prepareExtra?.(tasks.slice(mb.firstGroup, mb.firstGroup + cfg.promptsPerMiniBatch)) ?? null);
    try {
      const lr = this.schedule(this.stepIndex - this.optimizerStart);
      const updates: UpdateStats[] = [];
      for (let epoch = 0; epoch < cfg.ppoEpochs; epoch++) { // ppoEpochs = 1 in the paper: one pass over the mini-batches
        prep.minibatches.forEach((mb, i) => {
          updates.push(updateMiniBatch(this.model, this.opt, mb, cfg, lr, { signal: this.args.signal, extra: extras[i], stepNo }));
        });
      }
      // tokens the update reads: each micro-batch, plus each mini-batch's shared prompts (read once per epoch)
      const trainTokens = prep.minibatches.reduce((a, mb) => a + (mb.prefix?.ids.size ?? 0) + mb.micro.reduce((b, m) => b + m.batch.inputs.size, 0), 0) * cfg.ppoEpochs;
      const trainSeconds = (Date.now() - t1) / 1000;
      this.stepIndex = stepNo;

      const rec: GRPOStepRecord = {
        step: stepNo,
        lr,
        ...rolloutFields(trajs, rewards, cfg.groupSize, rolloutSeconds),
        ...updateFields(updates, trainTokens, trainSeconds),
        entropy: prep.entropy,
        ...probeFields(this.model, tok, this.probeCtx),
        ...splitFields(prep.split, probeIds, tok),
        ...stateFields(trajs),
      };
      if (stepNo % cfg.valEvery === 0 || stepNo === cfg.steps) Object.assign(rec, this.validationFields(stepNo));
      this.args.metrics?.log(rec);
      this.writeStepRecords(stepNo, trajs);
      return rec;
    } finally {
      disposeMiniBatches(prep.minibatches);
      for (const e of extras) e?.dispose();
    }
  }

  /** Greedy validation (overall, per category, states) and the memorisation measure, as fields of the step record. */
  private validationFields(stepNo: number): Partial<GRPOStepRecord> {
    const val = this.validate();
    const out: Partial<GRPOStepRecord> = { valAccuracy: val.mean };
    for (const [c, v] of Object.entries(val.perCategory)) out[`val_${c}` as keyof PerCategoryAccuracy] = v.accuracy;
    out.valFullCollapse = val.states.fullCollapse;
    out.valHealthyCall = val.states.healthyCall;
    const memo = this.memorisation(stepNo);
    if (memo) {
      if (Number.isFinite(memo.seen)) out.valSeenReward = memo.seen;
      out.valUnseenReward = memo.unseen;
    }
    return out;
  }

  private writeStepRecords(step: number, trajs: Trajectory[]): void {
    const file = this.args.stepRecordsFile;
    if (!file) return;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const lines = trajs.map((t, i) => {
      const rec: RolloutRecord = {
        stage: this.args.stage, step, taskId: t.taskId, category: t.category, group: Math.floor(i / this.config.groupSize),
        index: i % this.config.groupSize, reward: t.reward, errorTurn: t.errorTurn,
        messages: t.messages.map((m) => m.content), states: t.messages.map((m) => m.state),
        scripted: t.messages.some((m) => m.scripted),
      };
      return JSON.stringify(rec);
    });
    fs.appendFileSync(file, lines.join('\n') + '\n');
  }

  dispose(): void {
    this.opt.dispose();
  }
}

/** The hint-free prompt of a task, exactly as the rollout engine encodes it. */
function renderPrompt(task: Task): string {
  return renderConversation(new Episode(task).initialMessages()) + ASSISTANT_PREFIX;
}

/** Swap a trajectory's prompt tokens for `prompt` (same conversation after it), shifting every offset. */
export function replacePrompt(t: Trajectory, prompt: number[]): void {
  const shift = prompt.length - t.promptLength;
  const zeros = prompt.map(() => 0);
  t.ids = prompt.concat(t.ids.slice(t.promptLength));
  t.lossMask = zeros.concat(t.lossMask.slice(t.promptLength));
  t.sampleLogProbs = zeros.concat(t.sampleLogProbs.slice(t.promptLength));
  t.sampleEntropies = zeros.concat(t.sampleEntropies.slice(t.promptLength));
  for (const r of t.probeReads) r.index += shift;
  t.offPolicy = zeros.concat(t.offPolicy.slice(t.promptLength));
  t.promptLength = prompt.length;
  for (const m of t.messages) { m.start += shift; m.end += shift; }
}
