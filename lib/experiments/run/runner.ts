/**
 * Runs one experiment end to end: build or load the starting policy, run its stages (SFT / GRPO) with
 * metrics and checkpoints, then evaluate greedily on the ID test split (free and constrained), format-OOD
 * and content-OOD, and write `summary.json`. Output folder layout:
 *   run.json        what was run (config, preset, seed, overrides, init, backend, data fingerprint)
 *   metrics.jsonl   one line per SFT or RL step (field `phase`), RL lines with every instrument
 *   rollouts.jsonl  step records of the RL rollouts (task id, messages, reward, errorTurn)
 *   rollouts-sample.jsonl  the records of step 1 and every 10th step (committed; rollout_sample.ts)
 *   checkpoint/     the final policy; best/ the policy of the best RL validation
 *   resume/         the latest RL checkpoint with optimizer and sampler state (for --resume; see resume.ts)
 *   branches/       kept resume states, when the preset keeps them (branch.ts)
 *   summary.json    final evaluation and the RL summary
 *   .lock           the pid of the process writing the folder (while it runs)
 * and nothing else: any other file in the folder is the user's, and no run removes it (store.ts, RunFolder).
 *
 * Order: every option, config, bound and input file (tasks, corpus, starting checkpoint, branch point) is
 * checked and loaded before the folder is touched (planRun; the CLI calls it before the backend starts);
 * then the RunFolder is opened (lock, clear or resume check, run.json), the stages run, and the final
 * evaluation writes summary.json.
 */
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
import { quietTfjs } from '../../util/quiet-tfjs';
import { checkSeed } from '../../prng';
import { GPT } from '../../model/gpt';
import { defaultGPTConfig } from '../../model/config';
import { loadCheckpoint, saveCheckpoint, verifyCheckpoint } from '../../model/checkpoint';
import { loadTokenizer, Tokenizer } from '../../format/tokenizer';
import { Task, CATEGORIES } from '../../envs/task';
import { evaluateModel, EvalResult } from '../../train/evaluate';
import { structuralMask } from '../../train/rollout';
import { MetricRecord } from '../../train/records';
import { MetricsLog, readMetrics } from '../../train/metrics';
import { GRPOMetric, grpoRecords } from '../../train/records';
import { ProgressBar } from '../../util/progress';
import { InputError, Refusal, writing } from '../../util/errors';
import { ExperimentSpec, StageSpec } from '../registry/spec';
import { Preset } from '../registry/presets';
import { DEFAULT_REGIME } from '../registry/regimes';
import { applyOverrides, pipelineOverrides, validateStages } from './overrides';
import { PipelineConfig } from '../../train/pipeline';
import { getExperiment } from '../registry/configs';
import { summarizeRL, RLSummary } from './summary';
import { writeRolloutSample } from '../store/rollout_sample';
import { loadResumeState, ResumeState } from '../store/resume';
import { loadBranchPoint, validateBranch } from '../store/branch';
import { BestValidation, RunContext, bestDir, readBest, runGRPO, runInterleavedSFT, runSFT } from './stages';
import { EVAL_SPLITS, EvalSplitName, RunInputs, loadInputs, perCategory, sftData, splitSyntax,
  unseenTasks } from './inputs';
import { RunFolder, RunIdentity, runMode, dataFingerprint, readRunJson, checkpointDir, hasWeights, DEFAULT_RESULTS_ROOT,
  isDefaultResultsRoot, DIVERGED_FILE } from '../store/folder';
import { Diverged } from '../../train/diverged';

quietTfjs();


export interface RunOptions {
  preset: Preset;
  seed: number;
  out: string;
  overrides?: Record<string, string | number | boolean>;
  /** Continue a killed run from `out/resume/` (only the run that run.json and the resume state name). */
  resume?: boolean;
  /** Start from another run's branch point (lib/experiments/store/branch.ts) instead of the config's initial policy. */
  branch?: { from: string; step: number };
  /** Clear a folder that holds results and start afresh (without it, such a folder is refused). */
  force?: boolean;
  /** Asked before every logged step; a reason (string) stops the run there with that error. */
  shouldStop?: () => string | null;
  /** Start from this checkpoint folder instead of the experiment's own initial policy (recorded in run.json). */
  initCheckpoint?: string;
  /** Terminal progress bars (default true). */
  progress?: boolean;
  dataDir?: string;
  /** Called after every RL step with its record (live notebook plots). */
  onStep?: (rec: GRPOMetric) => void;
  /** Skip the final OOD evaluations (used by tests). */
  evalSplits?: EvalSplitName[];
}

export interface RunSummary {
  config: string;
  title: string;
  paper: string;
  preset: string;
  /** Absent in runs of before regimes (strong). */
  regime?: string;
  seed: number;
  overrides: Record<string, string | number | boolean>;
  eval: Partial<Record<EvalSplitName, SplitEval>>;
  /** The best RL validation's policy on the same ID test tasks as the final one (runs with RL only). */
  best?: BestValidation & { id: SplitEval };
  rl: RLSummary | null;
  sft: { stages: number; finalLoss: number | null };
  /** The paper's pipeline differences the run lived with (lib/train/pipeline.ts); absent in runs made before them. */
  pipeline?: PipelineConfig;
  /** The tfjs backend the run used: results reproduce exactly only on the same backend. */
  backend: string;
  /** Wall seconds of the run over all its processes (a resumed run's earlier ones up to their last saved state). */
  seconds: number;
}

/**
 * One split's final evaluation in summary.json: the accuracies and state shares, and the outcome of every
 * task (per category, one character per task in split order, '1' = passed) for confidence intervals over
 * tasks and paired comparisons between methods (lib/report/stats/bootstrap.ts).
 */
export type SplitEval = Omit<EvalResult, 'results'> & { outcomes?: Record<string, string> };

/** Per category, '1' / '0' per task in the order evaluated. */
export function outcomeStrings(results: EvalResult['results']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of results) out[r.category] = (out[r.category] ?? '') + (r.pass ? '1' : '0');
  return out;
}

/**
 * The results-store folder of a run: data/results/<store>/<config>/seed-<n> (store: Preset.store, e.g. full-instruct).
 */
export function resultsDir(store: string, config: string, seed: number, root = DEFAULT_RESULTS_ROOT): string {
  return path.join(root, store, config, `seed-${seed}`);
}

/** The checkpoint folder the run starts from (null: from scratch); throws when it is missing. */
function initDir(spec: ExperimentSpec, opts: RunOptions): string | null {
  const given = opts.initCheckpoint !== undefined ? { kind: 'checkpoint' as const,
    path: opts.initCheckpoint } : spec.init;
  const init = given.kind === 'base' ? { kind: 'checkpoint' as const, path: opts.preset.regime.base } : given;
  if (init.kind === 'scratch') return null;
  if (init.kind === 'checkpoint') {
    if (!hasWeights(init.path)) {
      const regime = opts.preset.regime;
      const build = given.kind === 'base' ? ` (the ${regime.name} regime's base: \`npx toolrl run --config ` +
        `${regime.baseConfig} --preset quick\` builds it, ${init.path}/README.md says how)` : '';
      throw new Error(`${spec.name} starts from the checkpoint ${init.path}, which has no model.json${build}`);
    }
    return init.path;
  }
  const root = path.dirname(path.dirname(path.dirname(opts.out)));
  const dir = checkpointDir(resultsDir(opts.preset.store, init.name, opts.seed, root));
  if (!hasWeights(dir)) {
    // `reproduce` runs the init first, again if it finished without leaving its (uncommitted) checkpoint here
    const results = isDefaultResultsRoot(root) ? '' : ` --results ${root}`;
    throw new Error(`${spec.name} starts from ${init.name}, whose checkpoint is missing at ${dir}: run ` +
      `\`npx toolrl reproduce --preset ${opts.preset.name}${regimeFlag(opts.preset)} --only ${spec.name} --seeds ` +
        `${opts.seed}${results}\`, ` +
      `which runs ${init.name} first`);
  }
  return dir;
}

/** ` --regime NAME` for a suggested command, empty in the default regime. */
export function regimeFlag(p: Preset): string {
  return p.regime.name === DEFAULT_REGIME ? '' : ` --regime ${p.regime.name}`;
}

/** The policy a fresh run starts from and the folder it came from (the KL reference; null from scratch). */
function startingPolicy(spec: ExperimentSpec, tok: Tokenizer, opts: RunOptions): { model: GPT; source: string | null } {
  const dir = initDir(spec, opts);
  if (dir === null) {
    const init = spec.init.kind === 'scratch' ? spec.init : { kind: 'scratch' as const };
    return { model: new GPT(defaultGPTConfig(tok.size, init.model ?? {}), opts.seed), source: null };
  }
  return { model: loadCheckpoint(dir, { expectVocabFingerprint: tok.fingerprint }).model, source: dir };
}

/** An input error as a Refusal of kind "usage" (exit 2); refusals of other kinds keep their codes. */
const asRefusal = (e: unknown): Refusal => (e instanceof Refusal ? e : new InputError((e as Error).message));

/**
 * Every check that needs neither a backend nor the folder: options, seed, the stages with their overrides
 * applied, validated and bounded, the starting checkpoint's files (with its content hash), a branch request,
 * and the folder's state (RunFolder.check). Throws a Refusal (exit code by kind); returns the stages to run.
 */
export function validateRun(spec: ExperimentSpec, opts: RunOptions): { stages: StageSpec[]; pipeline: PipelineConfig } {
  let stages: StageSpec[];
  let pipeline: PipelineConfig;
  try {
    checkSeed(opts.seed);
    if (opts.resume &&
      opts.force) throw new Error('--resume and --force exclude each other (resume continues a run, force starts it ' +
      'again)');
    stages = applyOverrides(spec.stages(opts.preset), opts.overrides ?? {});
    pipeline = pipelineOverrides(spec.pipeline, opts.overrides ?? {});
    validateStages(stages);
    const init = initDir(spec, opts);
    if (init !== null) {
      const rel = path.relative(path.resolve(opts.out), path.resolve(init));
      if (!rel.startsWith('..') && !path.isAbsolute(rel)) {
        throw new Error(`the starting checkpoint ${init} lies inside the output folder ${opts.out}, which a fresh ` +
          `run clears`);
      }
      verifyCheckpoint(init, { expectVocabFingerprint: loadTokenizer(path.join(opts.dataDir ?? 'data',
        'vocab.json')).fingerprint });
    }
    if (opts.branch) {
      if (opts.initCheckpoint !== undefined) throw new Error('--branch and --init exclude each other (a branch ' +
        'starts from the parent\'s policy)');
      validateBranch(opts.branch.from, opts.branch.step, stages,
        { config: spec.name, preset: opts.preset.name, data: dataFingerprint(opts.dataDir ?? 'data') });
    }
  } catch (e) {
    throw asRefusal(e);
  }
  new RunFolder(opts.out).check(runMode(opts)); // again under the lock (RunFolder.open); here it fails before any work
  return { stages, pipeline };
}

/** What a run needs before it may touch its folder: its stages and every input file, loaded and validated. */
export interface RunPlan {
  stages: StageSpec[];
  pipeline: PipelineConfig;
  inputs: RunInputs;
}

/** validateRun, then load every input (tasks, corpus, evaluation splits); throws a Refusal naming what is wrong. */
export function planRun(spec: ExperimentSpec, opts: RunOptions): RunPlan {
  const { stages, pipeline } = validateRun(spec, opts);
  try {
    return { stages, pipeline, inputs: loadInputs(stages, opts.preset, opts.dataDir ?? 'data',
      opts.evalSplits ?? EVAL_SPLITS) };
  } catch (e) {
    throw asRefusal(e);
  }
}

function runIdentity(spec: ExperimentSpec, opts: RunOptions): RunIdentity {
  const identity: RunIdentity = { config: spec.name, preset: opts.preset.name, regime: opts.preset.regime.name,
    seed: opts.seed,
    overrides: opts.overrides ?? {}, init: opts.initCheckpoint ?? null, backend: tf.getBackend(),
      data: dataFingerprint(opts.dataDir ?? 'data'),
    branch: opts.branch ?? null };
  if (opts.branch) {
    const parent = readRunJson(opts.branch.from);
    if (parent && parent.backend !== identity.backend) {
      throw new InputError(`--branch: ${opts.branch.from} ran on the ${parent.backend} backend, this run has ` +
        `${identity.backend}`);
    }
  }
  return identity;
}

/**
 * Run `spec` with `opts`; resolves to the summary it writes. `plan` (from planRun) when the caller has
 * checked the run already. The run yields to the event loop between steps, so a notebook's live chart
 * updates while it trains.
 */
export async function runExperiment(spec: ExperimentSpec, opts: RunOptions, plan?: RunPlan): Promise<RunSummary> {
  const t0 = Date.now();
  const { stages, pipeline, inputs } = plan ?? planRun(spec, opts);
  const identity = runIdentity(spec, opts);
  // the starting weights, read (and their hashes checked) before the folder is touched; a resume state lives
  // in the folder and is read once it is locked
  const branch = opts.branch ? loadBranchPoint(opts.branch.from, opts.branch.step, opts.out, inputs.tok) : null;
  const start = opts.resume || branch ? null : startingPolicy(spec, inputs.tok, opts);
  const folder = new RunFolder(opts.out);
  let model: GPT | null = branch?.model ?? start?.model ?? null;
  try {
    folder.open(identity, runMode(opts));
    const resume = opts.resume ? loadResumeState(opts.out, inputs.tok, identity) : branch;
    model = resume?.model ?? model!;
    // a resumed run's clock carries on from its saved state; a branch is a run of its own
    const startedAt = t0 - (opts.resume && resume ? resume.seconds * 1000 : 0);
    const ctx = runContext(spec, opts,
      { inputs, identity, model, metrics: openMetrics(spec, opts, resume), startedAt, pipeline, resume });
    await runStages(ctx, stages, inputs);
    return finish(spec, opts, ctx, stages, inputs, folder);
  } catch (e) {
    // the folder keeps what was logged up to the step that diverged, and says so: unfinished, not a crash
    if (e instanceof Diverged) folder.writeJson(DIVERGED_FILE, e.info);
    throw e;
  } finally {
    model?.dispose();
    folder.close();
  }
}

/** metrics.jsonl (truncated for a fresh start), with the logs cut back to a resume or branch point. */
function openMetrics(spec: ExperimentSpec, opts: RunOptions, resume: ResumeState | null): MetricsLog {
  const stop = opts.shouldStop;
  const metrics = new NamedMetricsLog(path.join(opts.out, 'metrics.jsonl'), {
    truncate: !opts.resume,
    beforeLog: stop ? () =>
      { const why = stop(); if (why) throw new Error(`${spec.name} stopped: ${why}`); } : undefined,
  });
  if (resume) {
    resume.trimLogs(metrics);
    if (opts.progress !== false) {
      process.stderr.write(opts.resume
        ? `${spec.name}: resuming ${opts.out} at RL step ${resume.step} of stage ${resume.stage} ` +
          `(${metrics.records.length} logged records kept)\n`
        : `${spec.name}: branching from ${opts.branch!.from} at its RL step ${resume.step} ` +
          `(${metrics.records.length} records of it copied)\n`);
    }
  }
  return metrics;
}

/** A MetricsLog whose write errors name metrics.jsonl (an append that hits a full disk says only "write"). */
class NamedMetricsLog extends MetricsLog {
  log(rec: MetricRecord): void {
    writing(this.file as string, () => super.log(rec));
  }
}

function runContext(spec: ExperimentSpec, opts: RunOptions, run: { inputs: RunInputs; identity: RunIdentity;
  model: GPT; metrics: MetricsLog; startedAt: number; pipeline: PipelineConfig; resume: ResumeState | null }):
  RunContext {
  const { inputs } = run;
  return {
    name: spec.name, identity: run.identity, preset: opts.preset, seed: opts.seed, out: opts.out, tok: inputs.tok,
    model: run.model, pipeline: run.pipeline, source: initDir(spec, opts), trainTasks: inputs.trainTasks,
    valTasks: perCategory(inputs.testTasks, opts.preset.valTasksPerCategory), testTasks: inputs.testTasks,
    unseenTasks: (n) => unseenTasks(inputs.dataDir, n), metrics: run.metrics, startedAt: run.startedAt,
    progress: opts.progress !== false, resume: run.resume, onStep: opts.onStep,
    state: { globalStep: 0, sftFinalLoss: null, best: opts.resume ? readBest(opts.out) : null },
  };
}

/** The stages in order; a resumed run skips those it finished and re-enters its own at the saved step. */
async function runStages(ctx: RunContext, stages: StageSpec[], inputs: RunInputs): Promise<void> {
  const resume = ctx.resume;
  for (let si = 0; si < stages.length; si++) {
    const stage: StageSpec = stages[si];
    if (resume && si < resume.stage) continue;
    if (resume && si === resume.stage) ctx.state.globalStep = resume.globalStepBase;
    if (stage.kind === 'sft') ctx.state.sftFinalLoss = await runSFT(ctx, si, sftData(stage, inputs), stage.config,
      'sft');
    else if (stage.kind === 'sft-interleaved') await runInterleavedSFT(ctx, si, stage);
    else await runGRPO(ctx, si, stage);
  }
}

/** The final checkpoint, the evaluations, the rollout excerpt and summary.json. */
function finish(spec: ExperimentSpec, opts: RunOptions, ctx: RunContext, stages: StageSpec[], inputs: RunInputs,
  folder: RunFolder): RunSummary {
  saveCheckpoint(checkpointDir(opts.out), ctx.model, { vocabFingerprint: inputs.tok.fingerprint, config: spec.name,
    preset: opts.preset.name, seed: opts.seed, overrides: ctx.identity.overrides });
  const evals: RunSummary['eval'] = {};
  for (const split of opts.evalSplits ?? EVAL_SPLITS) evals[split] =
    evaluateSplit(ctx, split, inputs.evalTasks[split] ?? []);
  const idTasks = perCategory(inputs.testTasks, opts.preset.evalTasksPerCategory);
  const best = ctx.state.best === null ? undefined
    : evaluateBest(ctx.state.best, opts.out, inputs.tok, idTasks, spec.name, ctx.progress,
      ctx.pipeline.closedCallsOnly);
  const rlRecords = grpoRecords(ctx.metrics.records);
  writeRolloutSample(opts.out);
  const summary: RunSummary = {
    config: spec.name, title: spec.title, paper: spec.paper, preset: opts.preset.name, regime: opts.preset.regime.name,
      seed: opts.seed,
    overrides: ctx.identity.overrides,
    eval: evals,
    ...(best ? { best } : {}),
    rl: rlRecords.length ? summarizeRL(rlRecords) : null,
    sft: { stages: stages.filter((s) => s.kind !== 'grpo').length, finalLoss: ctx.state.sftFinalLoss },
    pipeline: ctx.pipeline,
    backend: tf.getBackend(),
    seconds: (Date.now() - ctx.startedAt) / 1000,
  };
  folder.writeJson('summary.json', summary);
  return summary;
}

/** One final greedy evaluation of the run's policy (constrained decoding on id_constrained). */
function evaluateSplit(ctx: RunContext, split: EvalSplitName, tasks: Task[]): SplitEval {
  const bar = new ProgressBar({ total: tasks.length, label: `${ctx.name} eval ${split}`, silent: !ctx.progress });
  const res = evaluateModel(ctx.model, ctx.tok, tasks, {
    syntax: splitSyntax(split),
    onProgress: (d) => bar.update(d),
    logitMask: split === 'id_constrained' ? structuralMask(ctx.tok) : undefined,
    closedCallsOnly: ctx.pipeline.closedCallsOnly, // the environment the run lives in (lib/train/pipeline.ts, E1)
  });
  bar.finish(`mean ${res.mean.toFixed(3)}`);
  const { results, ...rest } = res;
  return { ...rest, outcomes: outcomeStrings(results) };
}

/** The ID evaluation of the policy a run kept at its best validation (stages.ts, keepIfBest). */
function evaluateBest(best: BestValidation, out: string, tok: Tokenizer, tasks: Task[], name: string, progress: boolean,
  closedCallsOnly: boolean): BestValidation & { id: SplitEval } {
  const { model } = loadCheckpoint(bestDir(out), { expectVocabFingerprint: tok.fingerprint });
  try {
    const bar = new ProgressBar({ total: tasks.length, label: `${name} eval id (best: step ${best.globalStep})`,
      silent: !progress });
    const { results, ...rest } = evaluateModel(model, tok, tasks,
      { onProgress: (d) => bar.update(d), closedCallsOnly });
    bar.finish(`mean ${rest.mean.toFixed(3)}`);
    return { ...best, id: { ...rest, outcomes: outcomeStrings(results) } };
  } finally {
    model.dispose();
  }
}

/** Run a registered experiment by name. */
export function runByName(name: string, opts: RunOptions): Promise<RunSummary> {
  return runExperiment(getExperiment(name), opts);
}

