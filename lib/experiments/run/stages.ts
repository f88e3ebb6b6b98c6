/**
 * The three kinds of stage an experiment runs, each a function over a shared run context:
 *   sft              supervised fine-tuning on the corpus or the teacher trajectories (base, FCL-SFT, ACE-SFT)
 *   grpo             multi-turn GRPO, optionally with a synchronous signal (OPS, HBG, per-update SFT) and the
 *                    adaptive collapse guard
 *   sft-interleaved  an SFT phase between RL stages, from the last RL steps' records (ETS, PRS)
 */
import * as fs from 'fs';
import * as path from 'path';
import { GPT } from '../../model/gpt';
import { loadCheckpoint, saveCheckpoint } from '../../model/checkpoint';
import { Tokenizer } from '../../format/tokenizer';
import { JsonValue } from '../../format/types';
import { Task } from '../../envs/task';
import { buildArgPool } from '../../envs/judge';
import { trainSFT, defaultSFTConfig, SFTConfig } from '../../train/sft';
import { TrainingSequence } from '../../train/encode';
import { GRPOTrainer } from '../../train/grpo/trainer';
import { memorisationFields, rolloutRecord, validationFields } from '../../train/grpo/instruments';
import { SyncSignal } from '../../train/grpo/signal';
import { defaultGRPOConfig, GRPOConfig } from '../../train/grpo/config';
import { opsSignal } from '../../train/signals/ops';
import { hbgSignal } from '../../train/signals/hbg';
import { syncSftSignal } from '../../train/signals/syncsft';
import { etsData, failedTasks, lastSteps, prsData, readStepRecords } from '../../train/interleaved';
import { evaluateModel } from '../../train/evaluate';
import { MetricsLog } from '../../train/metrics';
import { GRPOMetric, GRPOStepRecord, PerCategoryAccuracy, SFTValMetric } from '../../train/records';
import { defaultGuardConfig, guardTriggered, GuardConfig } from './guard';
import { ProgressBar } from '../../util/progress';
import { yieldToEventLoop } from '../../util/yield';
import { writing } from '../../util/errors';
import { SignalSpec, StageSpec } from '../registry/spec';
import { Preset } from '../registry/presets';
import { saveResumeState, ResumeState } from '../store/resume';
import { keepBranchPoint } from '../store/branch';
import { RunIdentity } from '../store/folder';
import { PipelineConfig } from '../../train/pipeline';
import { perCategory } from './inputs';
import { divergedAt } from '../../train/diverged';

/**
 * What every stage reads: the run's inputs, fixed for its whole length (readonly), and `state`, the few things the
 * stages move on (the step axis, the best validation, the last SFT loss). A stage's signature shows what it can
 * change: only `ctx.state`, the model's weights and the files of the run folder.
 */
export interface RunContext {
  readonly name: string;
  /** What the run is (run.json); saved with every resume state. */
  readonly identity: RunIdentity;
  readonly preset: Preset;
  readonly seed: number;
  readonly out: string;
  readonly tok: Tokenizer;
  readonly model: GPT;
  /** The paper's pipeline differences the run lives with (lib/train/pipeline.ts). */
  readonly pipeline: PipelineConfig;
  /** Checkpoint folder of the starting policy (the KL reference), null when trained from scratch. */
  readonly source: string | null;
  readonly trainTasks: Task[];
  /** Validation tasks of the SFT stages (a fixed slice of the test split, the preset's valTasksPerCategory). */
  readonly valTasks: Task[];
  /** The test split, which a GRPO stage slices its own validation from (GRPOConfig.valTasksPerCategory). */
  readonly testTasks: Task[];
  /** n never-seen tasks per category of the training distribution (the memorisation measure), made on first use. */
  readonly unseenTasks: (n: number) => Task[];
  readonly metrics: MetricsLog;
  /**
   * When the run's clock started (Date.now() ms): this process's start, minus the seconds earlier processes of a
   * resumed run had spent up to its saved state. summary.json's `seconds` and every resume state read it.
   */
  readonly startedAt: number;
  readonly progress: boolean;
  /** The resume state this process started from (null for a fresh run): the stage it re-enters restores it. */
  readonly resume: ResumeState | null;
  /** After every RL step (the record as metrics.jsonl holds it). */
  readonly onStep?: (rec: GRPOMetric) => void;
  readonly state: RunState;
}

/** What the stages move on as the run goes. */
export interface RunState {
  /** Steps logged so far over all stages (SFT and RL), the x axis of every curve. */
  globalStep: number;
  /** The final loss of the last SFT stage (summary.json's sft.finalLoss); a guard's phases are not stages. */
  sftFinalLoss: number | null;
  /** The best RL validation so far and where it was (its policy is in best/), or null before the first. */
  best: BestValidation | null;
}

/** The best validated policy of a run (the paper's Appendix D: some runs peak mid-training, then collapse). */
export interface BestValidation {
  globalStep: number;
  valAccuracy: number;
}

/** Where a run keeps the policy of its best RL validation (not committed: weights). */
export const bestDir = (out: string): string => path.join(out, 'best');

/** The best validation recorded in `out/best/` (null when there is none): how a resumed run knows it. */
export function readBest(out: string): BestValidation | null {
  const file = path.join(bestDir(out), 'model.json');
  if (!fs.existsSync(file)) return null;
  const meta = (JSON.parse(fs.readFileSync(file, 'utf8')) as { meta?: Partial<BestValidation> }).meta ?? {};
  return typeof meta.globalStep === 'number' && typeof meta.valAccuracy === 'number'
    ? { globalStep: meta.globalStep, valAccuracy: meta.valAccuracy } : null;
}

/** After an RL validation: keep the policy in best/ when it beats every earlier one (ties keep the earlier). */
function keepIfBest(ctx: RunContext, globalStep: number, valAccuracy: number): void {
  if (ctx.state.best !== null && valAccuracy <= ctx.state.best.valAccuracy) return;
  ctx.state.best = { globalStep, valAccuracy };
  saveCheckpoint(bestDir(ctx.out), ctx.model,
    { vocabFingerprint: ctx.tok.fingerprint, config: ctx.name, ...ctx.state.best });
}

export function rolloutsFile(ctx: RunContext): string {
  return path.join(ctx.out, 'rollouts.jsonl');
}

/**
 * SFT with a quick greedy validation after every epoch (how skill on the world grows with SFT); its steps go on
 * the global step axis. Resolves to the final loss.
 */
export async function runSFT(ctx: RunContext, si: number, data: TrainingSequence[], config: Partial<SFTConfig>,
  label: string): Promise<number> {
  const res = await trainSFT(ctx.model, data, { ...defaultSFTConfig, seed: ctx.seed, ...config }, {
    metrics: { log: (r) => ctx.metrics.log({ phase: 'sft', ...r, stage: si, globalStep: ++ctx.state.globalStep }) },
    progress: ctx.progress, label: `${ctx.name} ${label}`, stage: si,
    onEpochEnd: (epoch) => {
      const val = evaluateModel(ctx.model, ctx.tok, ctx.valTasks);
      const rec: SFTValMetric = { phase: 'sft-val', stage: si, epoch, globalStep: ctx.state.globalStep,
        valAccuracy: val.mean,
        valHealthyCall: val.states.healthyCall, valFullCollapse: val.states.fullCollapse };
      for (const [c, v] of Object.entries(val.perCategory)) rec[`val_${c}` as keyof PerCategoryAccuracy] = v.accuracy;
      ctx.metrics.log(rec);
      if (ctx.progress) process.stderr.write(`  epoch ${epoch}: val accuracy ${val.mean.toFixed(3)}, healthy calls ` +
        `${val.states.healthyCall.toFixed(2)}\n`);
    },
  });
  return res.finalLoss;
}

function buildSignal(spec: SignalSpec | undefined, tok: Tokenizer): SyncSignal | undefined {
  if (!spec) return undefined;
  if (spec.kind === 'ops') return opsSignal(spec.config);
  if (spec.kind === 'hbg') return hbgSignal(spec.config);
  return syncSftSignal(tok, spec.config);
}

/** The interleaved SFT data from the RL records of stage `rlStage` (ETS: teacher trajectories of failed tasks). */
function interleavedData(ctx: RunContext, source: 'ets' | 'prs', rlStage: number | undefined, steps: number,
  pool: () => Map<string, JsonValue[]>): { data: TrainingSequence[]; failed: number } {
  const recent = lastSteps(readStepRecords(rolloutsFile(ctx)), steps, rlStage);
  const byId = new Map(ctx.trainTasks.map((t) => [t.id, t] as [string, Task]));
  const failed = failedTasks(recent, byId);
  const data = etsData(ctx.tok, failed);
  if (source === 'prs') data.push(...prsData(ctx.tok, recent, byId, pool()));
  return { data, failed: failed.length };
}

/** An ETS / PRS phase after the RL stage `si - 1`. */
export async function runInterleavedSFT(ctx: RunContext, si: number, stage: Extract<StageSpec,
  { kind: 'sft-interleaved' }>): Promise<void> {
  let pool: Map<string, JsonValue[]> | null = null;
  const { data, failed } = interleavedData(ctx, stage.source, si - 1, stage.lastSteps,
    () => (pool = pool ?? buildArgPool(ctx.trainTasks)));
  ctx.metrics.log({ phase: 'interleave', stage: si, globalStep: ctx.state.globalStep, source: stage.source,
    failedTasks: failed, samples: data.length });
  if (data.length === 0) return; // nothing failed: nothing to supervise
  ctx.state.sftFinalLoss = await runSFT(ctx, si, data, stage.config, stage.source);
}

/** A GRPO stage (with its signal and guard), checkpointing resume state every `checkpointEvery` steps. */
export async function runGRPO(ctx: RunContext, si: number, stage: Extract<StageSpec, { kind: 'grpo' }>): Promise<void> {
  const cfg: GRPOConfig = { ...defaultGRPOConfig, seed: ctx.seed, valTasksPerCategory: ctx.preset.valTasksPerCategory,
    ...stage.config };
  // the first valTasksPerCategory test tasks of each category: the validation, and the probe's prompts
  const valTasks = perCategory(ctx.testTasks, cfg.valTasksPerCategory);
  const ref = ctx.source ? loadCheckpoint(ctx.source, { expectVocabFingerprint: ctx.tok.fingerprint }).model : null;
  // global step of RL step 0; a guard phase's SFT steps move it on, so later RL steps come after them on the axis
  let base = ctx.state.globalStep;
  const placed = (r: GRPOStepRecord): GRPOMetric => ({ phase: 'grpo', stage: si, globalStep: base + r.step, ...r });
  const trainer = new GRPOTrainer({
    model: ctx.model, ref, tokenizer: ctx.tok, trainTasks: ctx.trainTasks, valTasks, config: cfg,
    signal: buildSignal(stage.signal, ctx.tok), pipeline: ctx.pipeline,
  });
  const unseen = cfg.memoTasksPerCategory > 0 ? ctx.unseenTasks(cfg.memoTasksPerCategory) : [];
  if (ctx.resume && ctx.resume.stage === si) ctx.resume.restoreTrainer(trainer);
  const guard = stage.guard ? { ...defaultGuardConfig, ...stage.guard } : null;
  let phases = 0;
  let lastPhase = 0;
  for (const r of ctx.metrics.records) if (r.phase === 'guard' && r.stage === si) { phases++; lastPhase = r.step; }
  const bar = new ProgressBar({ total: cfg.steps, label: `${ctx.name} rl`, silent: !ctx.progress,
    done: trainer.stepIndex });
  let stepNo = trainer.stepIndex + 1; // the step under way: what a Diverged error names
  try {
    while (trainer.stepIndex < cfg.steps) {
      stepNo = trainer.stepIndex + 1;
      const { record: rec, trajs } = trainer.step();
      // greedy validation (and the memorisation measure) every valEvery steps and at the last, on the updated policy
      if (rec.step % cfg.valEvery === 0 || rec.step === cfg.steps) {
        Object.assign(rec, validationFields(ctx.model, ctx.tok, valTasks, cfg, ctx.pipeline),
          memorisationFields(ctx.model, ctx.tok, cfg, ctx.trainTasks, trainer.seen, unseen, rec.step, ctx.pipeline));
      }
      ctx.metrics.log(placed(rec));
      const lines = trajs.map((t, i) => JSON.stringify(rolloutRecord(t, si, rec.step, i, cfg.groupSize)));
      writing(rolloutsFile(ctx), () => fs.appendFileSync(rolloutsFile(ctx), lines.join('\n') + '\n'));
      ctx.onStep?.(placed(rec));
      if (rec.valAccuracy !== undefined) keepIfBest(ctx, base + rec.step, rec.valAccuracy);
      const val = rec.valAccuracy !== undefined ? ` val ${rec.valAccuracy.toFixed(2)}` : '';
      bar.update(trainer.stepIndex,
        `r ${rec.reward.toFixed(2)}${val} p{" ${rec.pJsonOpen.toFixed(3)} p<|im_end|> ${rec.pImEnd.toFixed(3)} ` +
        `collapse ${rec.fullCollapse.toFixed(2)} | ${(rec.rolloutSeconds + rec.trainSeconds).toFixed(1)}s/step`);
      if (guard && phases < guard.maxPhases && trainer.stepIndex - lastPhase >= guard.minGap &&
          trainer.stepIndex < cfg.steps && guardTriggered(guard, rec)) {
        base = await guardPhase(ctx, si, guard, trainer, rec, base);
        phases++;
        lastPhase = trainer.stepIndex;
      }
      if (cfg.checkpointEvery > 0 && trainer.stepIndex % cfg.checkpointEvery === 0 && trainer.stepIndex < cfg.steps) {
        saveResumeState(ctx.out, { identity: ctx.identity, stage: si, globalStepBase: base, model: ctx.model, trainer,
          metricsLines: ctx.metrics.records.length, vocabFingerprint: ctx.tok.fingerprint,
            seconds: (Date.now() - ctx.startedAt) / 1000 });
        if (ctx.preset.resumePoints) keepBranchPoint(ctx.out, base + trainer.stepIndex);
      }
      await yieldToEventLoop();
    }
    bar.finish();
  } catch (e) {
    throw divergedAt(e, { phase: 'grpo', stage: si, step: stepNo, lr: trainer.lrOfStep(stepNo) });
  } finally {
    trainer.dispose();
    ref?.dispose();
  }
  ctx.state.globalStep = base + cfg.steps;
}

/**
 * The collapse guard has fired after `rec`: an ETS-style SFT phase now, then RL goes on with a fresh optimizer.
 * Returns the new global step of RL step 0 (the phase's SFT steps come before the following RL steps on the axis).
 */
async function guardPhase(ctx: RunContext, si: number, guard: GuardConfig, trainer: GRPOTrainer, rec: GRPOStepRecord,
  base: number): Promise<number> {
  const { data, failed } = interleavedData(ctx, 'ets', si, guard.lastSteps, () => new Map());
  ctx.metrics.log({ phase: 'guard', stage: si, step: trainer.stepIndex, globalStep: base + trainer.stepIndex,
    pImEnd: rec.pImEnd, pJsonOpen: rec.pJsonOpen, fullCollapse: rec.controlCollapse ?? rec.fullCollapse,
      failedTasks: failed });
  let next = base;
  if (data.length > 0) {
    // the phase's SFT steps go on the axis right after this RL step; the RL steps after them shift by as many
    ctx.state.globalStep = base + trainer.stepIndex;
    await runSFT(ctx, si, data, guard.sft, 'guard-sft');
    next = ctx.state.globalStep - trainer.stepIndex;
  }
  trainer.resetOptimizer();
  return next;
}
