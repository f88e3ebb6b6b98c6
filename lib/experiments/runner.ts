/**
 * Runs one experiment end to end: build or load the starting policy, run its stages (SFT / GRPO) with
 * metrics and checkpoints, then evaluate greedily on the ID test split (free and constrained), format-OOD
 * and content-OOD, and write `summary.json`. Output folder layout:
 *   run.json        what was run (config, preset, seed, overrides, init, backend, data fingerprint)
 *   metrics.jsonl   one line per SFT or RL step (field `phase`), RL lines with every instrument
 *   rollouts.jsonl  step records of the RL rollouts (task id, messages, reward, errorTurn)
 *   rollouts-sample.jsonl  the records of step 1 and every 10th step (committed; rollout_sample.ts)
 *   checkpoint/     the final policy
 *   resume/         the latest RL checkpoint with optimizer and sampler state (for --resume; see resume.ts)
 *   summary.json    final evaluation and the RL summary
 *   .lock           the pid of the process writing the folder (while it runs)
 *
 * Every option and config is checked before the folder is touched. A fresh run refuses a folder that holds
 * results unless `force` (which clears it first); `resume` continues only the run that run.json and the
 * resume state describe. run.json and summary.json are replaced atomically (temp file + rename).
 */
import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../prng';
import { GPT } from '../model/gpt';
import { defaultGPTConfig } from '../model/config';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint';
import { loadTokenizer, Tokenizer } from '../format/tokenizer';
import { Task, CATEGORIES, TRAIN_CATEGORIES } from '../envs/task';
import { generateTasks, taskContentKey } from '../envs/generator';
import { loadTasks, loadCorpus } from '../envs/data';
import { teacherTrajectory } from '../envs/teacher';
import { encodeConversation, TrainingSequence } from '../train/encode';
import { evaluateModel, EvalResult } from '../train/evaluate';
import { structuralMask } from '../train/rollout';
import { MetricsLog, readMetrics } from '../train/metrics';
import { GRPOMetric, grpoRecords } from '../train/records';
import { ProgressBar } from '../util/progress';
import { writeJsonAtomic } from '../util/atomic';
import { acquireLock, lockHolder } from '../util/lock';
import { ExperimentSpec, SFTData, StageSpec } from './spec';
import { Preset } from './presets';
import { DEFAULT_REGIME } from './regimes';
import { applyOverrides, validateStages } from './overrides';
import { getExperiment } from './configs';
import { summarizeRL, RLSummary } from './summary';
import { writeRolloutSample } from './rollout_sample';
import { loadResumeState } from './resume';
import { loadBranchPoint, validateBranch } from './branch';
import { BestValidation, RunContext, bestDir, readBest, runGRPO, runInterleavedSFT, runSFT } from './stages';
import { RunIdentity, clearRunFolder, resumeDir, dataFingerprint, describeIdentity, identityDiff, readRunJson, resultEntries,
  unfinishedReason, checkpointDir, hasWeights, DEFAULT_RESULTS_ROOT, isDefaultResultsRoot } from './store';

/**
 * The final evaluations: ID test tasks, the same with constrained decoding (the capability probe: only
 * structurally impossible tokens after `<tool_call>\n` forbidden), format-OOD, content-OOD, and format+content-OOD
 * (the held-out family in the python-list syntax: the paper's Table 2 has both ACEBench columns).
 */
export type EvalSplitName = 'id' | 'id_constrained' | 'format_ood' | 'content_ood' | 'format_content_ood';
export const EVAL_SPLITS: EvalSplitName[] = ['id', 'id_constrained', 'format_ood', 'content_ood', 'format_content_ood'];

/** The call syntax a split's prompts ask for: the python list on the format-OOD splits, tagged JSON elsewhere. */
export function splitSyntax(split: string): 'json' | 'python' {
  return split === 'format_ood' || split === 'format_content_ood' ? 'python' : 'json';
}

export interface RunOptions {
  preset: Preset;
  seed: number;
  out: string;
  overrides?: Record<string, string | number | boolean>;
  /** Continue a killed run from `out/resume/` (only the run that run.json and the resume state name). */
  resume?: boolean;
  /** Start from another run's branch point (lib/experiments/branch.ts) instead of the config's initial policy. */
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
  /** The tfjs backend the run used: results reproduce exactly only on the same backend. */
  backend: string;
  seconds: number;
}

/**
 * One split's final evaluation in summary.json: the accuracies and state shares, and the outcome of every
 * task (per category, one character per task in split order, '1' = passed) for confidence intervals over
 * tasks and paired comparisons between methods (lib/report/bootstrap.ts).
 */
export type SplitEval = Omit<EvalResult, 'results'> & { outcomes?: Record<string, string> };

/** Per category, '1' / '0' per task in the order evaluated. */
export function outcomeStrings(results: EvalResult['results']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of results) out[r.category] = (out[r.category] ?? '') + (r.pass ? '1' : '0');
  return out;
}

/** The results-store folder of a run: data/results/<store>/<config>/seed-<n> (store: Preset.store, e.g. full-instruct). */
export function resultsDir(store: string, config: string, seed: number, root = DEFAULT_RESULTS_ROOT): string {
  return path.join(root, store, config, `seed-${seed}`);
}

/** First `n` tasks of each category (all when n <= 0), in file order. */
export function perCategory(tasks: Task[], n: number): Task[] {
  if (n <= 0) return tasks;
  const count: Record<string, number> = {};
  return tasks.filter((t) => (count[t.category] = (count[t.category] ?? 0) + 1) <= n);
}

/** The checkpoint folder the run starts from (null: from scratch); throws when it is missing. */
function initDir(spec: ExperimentSpec, opts: RunOptions): string | null {
  const given = opts.initCheckpoint !== undefined ? { kind: 'checkpoint' as const, path: opts.initCheckpoint } : spec.init;
  const init = given.kind === 'base' ? { kind: 'checkpoint' as const, path: opts.preset.regime.base } : given;
  if (init.kind === 'scratch') return null;
  if (init.kind === 'checkpoint') {
    if (!hasWeights(init.path)) {
      const build = given.kind === 'base' ? ` (the ${opts.preset.regime.name} regime's base: \`npx toolrl run --config ` +
        `${opts.preset.regime.baseConfig} --preset quick\` builds it, ${init.path}/README.md says how)` : '';
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
      `\`npx toolrl reproduce --preset ${opts.preset.name}${regimeFlag(opts.preset)} --only ${spec.name} --seeds ${opts.seed}${results}\`, ` +
      `which runs ${init.name} first`);
  }
  return dir;
}

/** ` --regime NAME` for a suggested command, empty in the default regime. */
export function regimeFlag(p: Preset): string {
  return p.regime.name === DEFAULT_REGIME ? '' : ` --regime ${p.regime.name}`;
}

function initialModel(spec: ExperimentSpec, tok: Tokenizer, opts: RunOptions): { model: GPT; source: string | null } {
  const dir = initDir(spec, opts);
  if (dir === null) {
    const init = spec.init.kind === 'scratch' ? spec.init : { kind: 'scratch' as const };
    return { model: new GPT(defaultGPTConfig(tok.size, init.model ?? {}), opts.seed), source: null };
  }
  return { model: loadCheckpoint(dir, { expectVocabFingerprint: tok.fingerprint }).model, source: dir };
}

/**
 * Everything that can be checked before the output folder is touched: the options, the stages with their
 * overrides applied and validated, and the starting checkpoint. Returns the stages to run.
 */
export function validateRun(spec: ExperimentSpec, opts: RunOptions): StageSpec[] {
  if (!Number.isInteger(opts.seed) || opts.seed < 1) throw new Error(`seed must be an integer >= 1, got ${opts.seed}`);
  if (opts.resume && opts.force) throw new Error('--resume and --force exclude each other (resume continues a run, force starts it again)');
  const stages = applyOverrides(spec.stages(opts.preset), opts.overrides ?? {});
  validateStages(stages);
  const init = initDir(spec, opts);
  const rel = init === null ? null : path.relative(path.resolve(opts.out), path.resolve(init));
  if (rel !== null && !rel.startsWith('..') && !path.isAbsolute(rel)) {
    throw new Error(`the starting checkpoint ${init} lies inside the output folder ${opts.out}, which a fresh run clears`);
  }
  // the folder checks again under the lock (prepareFolder); here they fail before any work starts
  const holder = lockHolder(opts.out);
  if (holder) throw new Error(`run folder ${opts.out} is in use by process ${holder.pid} (since ${holder.started})`);
  const held = resultEntries(opts.out);
  if (!opts.resume && !opts.force && held.length) throw new Error(holdsResults(opts.out, held));
  if (opts.resume && resumeDir(opts.out) === null) {
    throw new Error(`--resume: no resume state in ${path.join(opts.out, 'resume')} (a run saves one every checkpointEvery RL steps)`);
  }
  if (opts.branch) {
    if (opts.initCheckpoint !== undefined) throw new Error('--branch and --init exclude each other (a branch starts from the parent\'s policy)');
    validateBranch(opts.branch.from, opts.branch.step, stages, { config: spec.name, preset: opts.preset.name, data: dataFingerprint(opts.dataDir ?? 'data') });
  }
  return stages;
}

const holdsResults = (out: string, held: string[]) => `${out} already holds results (${held.join(', ')}): ` +
  'pass --force to clear it and start again, or --resume to continue a killed run';

/**
 * Make the locked folder ready: for a fresh run refuse (or with `force` clear) old results and write run.json;
 * for --resume check that the folder holds this unfinished run.
 */
function prepareFolder(out: string, identity: RunIdentity, opts: RunOptions): void {
  if (opts.resume) {
    if (unfinishedReason(out) === null) {
      throw new Error(`--resume: ${out} holds a finished run (summary.json); nothing to resume (--force starts it again)`);
    }
    if (fs.existsSync(path.join(out, 'run.json'))) {
      const old = readRunJson(out);
      const diff = identityDiff(old, identity, true); // a run.json of an older version lacks the data fingerprint
      if (diff.length) {
        throw new Error(`--resume: ${path.join(out, 'run.json')} is another run (${describeIdentity(old)}), ` +
          `not this one (${describeIdentity(identity)}): ${diff.join('; ')}`);
      }
    }
    return;
  }
  const held = resultEntries(out);
  if (held.length && !opts.force) throw new Error(holdsResults(out, held));
  clearRunFolder(out);
  writeJsonAtomic(path.join(out, 'run.json'), identity);
}

/** Seed of the world-sample tasks (distinct from the splits' seeds, and deduplicated against them). */
export const WORLD_SAMPLE_SEED = 7_000_001;

/** Seed of the corpus conversations a stage replays (SFT stage `replay`). */
export const REPLAY_SEED = 7_000_002;

/** Seed of the never-seen tasks of the memorisation measure (GRPOConfig.memoTasksPerCategory). */
export const UNSEEN_SEED = 7_000_003;
/** World-sample dialogues per category that the never-seen tasks avoid: the most any base config trains on. */
const WORLD_SAMPLE_MAX = 1500;

const unseenCache = new Map<string, Task[]>();
/**
 * `n` tasks per training category from the training distribution that neither split, nor any base's world
 * sample, holds: tasks RL never draws and no base has seen (memoised per data folder and n).
 */
export function unseenTasks(dataDir: string, n: number): Task[] {
  const key = `${path.resolve(dataDir)}:${n}`;
  if (!unseenCache.has(key)) {
    const splits = new Set(loadTasks('train', dataDir).concat(loadTasks('test', dataDir)).map(taskContentKey));
    const avoid = new Set(splits);
    // the world sample exactly as stageData draws it (a prefix of this for every count up to the maximum)
    for (const c of TRAIN_CATEGORIES) {
      for (const t of generateTasks(c, WORLD_SAMPLE_MAX, WORLD_SAMPLE_SEED, { idPrefix: 'instruct', avoid: splits })) avoid.add(taskContentKey(t));
    }
    unseenCache.set(key, TRAIN_CATEGORIES.flatMap((c) => generateTasks(c, n, UNSEEN_SEED, { idPrefix: 'unseen', avoid })));
  }
  return unseenCache.get(key)!;
}

function sftData(stage: { data: SFTData; count?: number; replay?: number }, tok: Tokenizer, preset: Preset, dataDir: string): TrainingSequence[] {
  const data = stageData(stage.data, tok, preset, dataDir, stage.count ?? 0);
  if (!stage.replay) return data;
  const corpus = stageData('corpus', tok, preset, dataDir, 0);
  return data.concat(new Rng(REPLAY_SEED).sample(corpus, Math.min(stage.replay, corpus.length)));
}

function stageData(kind: SFTData, tok: Tokenizer, preset: Preset, dataDir: string, count: number): TrainingSequence[] {
  if (kind === 'corpus') {
    let convs = loadCorpus(dataDir);
    if (preset.corpusLimit > 0) convs = convs.slice(0, preset.corpusLimit);
    return convs.map((c) => encodeConversation(tok, c));
  }
  if (kind === 'world-sample') {
    const avoid = new Set(loadTasks('train', dataDir).concat(loadTasks('test', dataDir)).map(taskContentKey));
    return TRAIN_CATEGORIES.flatMap((c) => generateTasks(c, count, WORLD_SAMPLE_SEED, { idPrefix: 'instruct', avoid }))
      .map((t) => encodeConversation(tok, teacherTrajectory(t, { syntax: 'json' })));
  }
  let tasks = loadTasks('train', dataDir);
  if (preset.trainTaskLimit > 0) tasks = perCategory(tasks, Math.ceil(preset.trainTaskLimit / 3));
  return tasks.map((t) => encodeConversation(tok, teacherTrajectory(t, { syntax: 'json' })));
}

/**
 * Run `spec` with `opts`; resolves to the summary it writes. The run yields to the event loop between steps,
 * so a notebook's live chart updates while it trains.
 */
export async function runExperiment(spec: ExperimentSpec, opts: RunOptions): Promise<RunSummary> {
  const t0 = Date.now();
  const dataDir = opts.dataDir ?? 'data';
  const overrides = opts.overrides ?? {};
  const stages = validateRun(spec, opts); // throws before anything is written
  const tok = loadTokenizer(path.join(dataDir, 'vocab.json'));
  const identity: RunIdentity = { config: spec.name, preset: opts.preset.name, regime: opts.preset.regime.name, seed: opts.seed, overrides,
    init: opts.initCheckpoint ?? null, backend: tf.getBackend(), data: dataFingerprint(dataDir), branch: opts.branch ?? null };
  if (opts.branch) {
    const parent = readRunJson(opts.branch.from);
    if (parent && parent.backend !== identity.backend) {
      throw new Error(`--branch: ${opts.branch.from} ran on the ${parent.backend} backend, this run has ${identity.backend}`);
    }
  }
  const release = acquireLock(opts.out, 'run folder');
  try {
    prepareFolder(opts.out, identity, opts);
    return await runLocked(spec, opts, stages, tok, identity, t0);
  } finally {
    release();
  }
}

async function runLocked(spec: ExperimentSpec, opts: RunOptions, stages: StageSpec[], tok: Tokenizer, identity: RunIdentity,
  t0: number): Promise<RunSummary> {
  const dataDir = opts.dataDir ?? 'data';
  const overrides = identity.overrides;
  const resume = opts.resume ? loadResumeState(opts.out, tok, identity)
    : opts.branch ? loadBranchPoint(opts.branch.from, opts.branch.step, opts.out, tok) : null;
  const stop = opts.shouldStop;
  const metrics = new MetricsLog(path.join(opts.out, 'metrics.jsonl'), {
    truncate: !opts.resume,
    beforeLog: stop ? () => { const why = stop(); if (why) throw new Error(`${spec.name} stopped: ${why}`); } : undefined,
  });
  if (resume) {
    resume.trimLogs(metrics);
    if (opts.progress !== false) {
      process.stderr.write(opts.resume
        ? `${spec.name}: resuming ${opts.out} at RL step ${resume.step} of stage ${resume.stage} (${metrics.records.length} logged records kept)\n`
        : `${spec.name}: branching from ${opts.branch!.from} at its RL step ${resume.step} (${metrics.records.length} records of it copied)\n`);
    }
  }

  const { model: initModel, source } = initialModel(spec, tok, opts);
  let model = initModel;
  if (resume) {
    model.dispose();
    model = resume.model;
  }
  const showProgress = opts.progress !== false;
  const trainTasks = (() => {
    const all = loadTasks('train', dataDir);
    return opts.preset.trainTaskLimit > 0 ? perCategory(all, Math.ceil(opts.preset.trainTaskLimit / 3)) : all;
  })();
  const testTasks = loadTasks('test', dataDir);
  const ctx: RunContext = {
    name: spec.name, identity, preset: opts.preset, seed: opts.seed, out: opts.out, tok, model, source, trainTasks,
    valTasks: perCategory(testTasks, opts.preset.valTasksPerCategory), metrics, globalStep: 0,
    unseenTasks: (n) => unseenTasks(dataDir, n),
    progress: showProgress, resume, onStep: opts.onStep, sftFinalLoss: null,
    best: opts.resume ? readBest(opts.out) : null,
  };

  try {
    for (let si = 0; si < stages.length; si++) {
      const stage: StageSpec = stages[si];
      if (resume && si < resume.stage) continue;
      if (resume && si === resume.stage) ctx.globalStep = resume.globalStepBase;
      if (stage.kind === 'sft') await runSFT(ctx, si, sftData(stage, tok, opts.preset, dataDir), stage.config, 'sft');
      else if (stage.kind === 'sft-interleaved') await runInterleavedSFT(ctx, si, stage);
      else await runGRPO(ctx, si, stage);
    }

    saveCheckpoint(checkpointDir(opts.out), model, { vocabFingerprint: tok.fingerprint, config: spec.name,
      preset: opts.preset.name, seed: opts.seed, overrides });

    // ---- final evaluation ----
    const evals: RunSummary['eval'] = {};
    for (const split of opts.evalSplits ?? EVAL_SPLITS) {
      const id = split === 'id' || split === 'id_constrained';
      const tasks = perCategory(id ? testTasks : loadTasks(split, dataDir), opts.preset.evalTasksPerCategory);
      const bar = new ProgressBar({ total: tasks.length, label: `${spec.name} eval ${split}`, silent: !showProgress });
      const res = evaluateModel(model, tok, tasks, {
        syntax: splitSyntax(split),
        onProgress: (d) => bar.update(d),
        logitMask: split === 'id_constrained' ? structuralMask(tok) : undefined,
      });
      bar.finish(`mean ${res.mean.toFixed(3)}`);
      const { results, ...rest } = res;
      evals[split] = { ...rest, outcomes: outcomeStrings(results) };
    }
    const best = ctx.best === null ? undefined : evaluateBest(ctx.best, opts.out, tok, perCategory(testTasks, opts.preset.evalTasksPerCategory),
      spec.name, showProgress);
    const rlRecords = grpoRecords(metrics.records);
    writeRolloutSample(opts.out);
    const summary: RunSummary = {
      config: spec.name, title: spec.title, paper: spec.paper, preset: opts.preset.name, regime: opts.preset.regime.name, seed: opts.seed, overrides,
      eval: evals,
      ...(best ? { best } : {}),
      rl: rlRecords.length ? summarizeRL(rlRecords) : null,
      sft: { stages: stages.filter((s) => s.kind !== 'grpo').length, finalLoss: ctx.sftFinalLoss },
      backend: tf.getBackend(),
      seconds: (Date.now() - t0) / 1000,
    };
    writeJsonAtomic(path.join(opts.out, 'summary.json'), summary);
    return summary;
  } finally {
    model.dispose();
  }
}

/** The ID evaluation of the policy a run kept at its best validation (stages.ts, keepIfBest). */
function evaluateBest(best: BestValidation, out: string, tok: Tokenizer, tasks: Task[], name: string, progress: boolean):
  BestValidation & { id: SplitEval } {
  const { model } = loadCheckpoint(bestDir(out), { expectVocabFingerprint: tok.fingerprint });
  try {
    const bar = new ProgressBar({ total: tasks.length, label: `${name} eval id (best: step ${best.globalStep})`, silent: !progress });
    const { results, ...rest } = evaluateModel(model, tok, tasks, { onProgress: (d) => bar.update(d) });
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

export { CATEGORIES, readMetrics };
