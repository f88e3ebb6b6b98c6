/**
 * Runs one experiment end to end: build or load the starting policy, run its stages (SFT / GRPO) with
 * metrics and checkpoints, then evaluate greedily on the ID test split (free and constrained), format-OOD
 * and content-OOD, and write `summary.json`. Output folder layout:
 *   run.json        what was run (config, preset, seed, overrides)
 *   metrics.jsonl   one line per SFT or RL step (field `phase`), RL lines with every instrument
 *   rollouts.jsonl  step records of the RL rollouts (task id, messages, reward, errorTurn)
 *   checkpoint/     the final policy
 *   resume/         the latest RL checkpoint with optimizer and sampler state (for --resume)
 *   summary.json    final evaluation and the RL summary
 */
import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
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
import { MetricsLog, readMetrics, MetricRecord } from '../train/metrics';
import { ProgressBar } from '../cli/progress';
import { ExperimentSpec, SFTData, StageSpec } from './spec';
import { Preset } from './presets';
import { applyOverrides } from './overrides';
import { getExperiment } from './configs';
import { summarizeRL, RLSummary } from './summary';
import { loadResumeState } from './resume';
import { RunContext, runGRPO, runInterleavedSFT, runSFT } from './stages';

/**
 * The final evaluations: ID test tasks, the same with constrained decoding (the capability probe: only
 * structurally impossible tokens after `<tool_call>` forbidden), format-OOD and content-OOD.
 */
export type EvalSplitName = 'id' | 'id_constrained' | 'format_ood' | 'content_ood';
export const EVAL_SPLITS: EvalSplitName[] = ['id', 'id_constrained', 'format_ood', 'content_ood'];

export interface RunOptions {
  preset: Preset;
  seed: number;
  out: string;
  overrides?: Record<string, string | number | boolean>;
  /** Continue a killed run from `out/resume/`. */
  resume?: boolean;
  /** Start from this checkpoint folder instead of the experiment's own initial policy (recorded in run.json). */
  initCheckpoint?: string;
  /** Terminal progress bars (default true). */
  progress?: boolean;
  dataDir?: string;
  /** Called after every RL step with its record (live notebook plots). */
  onStep?: (rec: MetricRecord) => void;
  /** Skip the final OOD evaluations (used by tests). */
  evalSplits?: EvalSplitName[];
}

export interface RunSummary {
  config: string;
  title: string;
  paper: string;
  preset: string;
  seed: number;
  overrides: Record<string, string | number | boolean>;
  eval: Partial<Record<EvalSplitName, Omit<EvalResult, 'results'>>>;
  rl: RLSummary | null;
  sft: { stages: number; finalLoss: number | null };
  /** The tfjs backend the run used: results reproduce exactly only on the same backend. */
  backend: string;
  seconds: number;
}

/** The results-store folder of a run: data/results/<preset>/<config>/seed-<n>. */
export function resultsDir(preset: string, config: string, seed: number, root = 'data/results'): string {
  return path.join(root, preset, config, `seed-${seed}`);
}

/** First `n` tasks of each category (all when n <= 0), in file order. */
export function perCategory(tasks: Task[], n: number): Task[] {
  if (n <= 0) return tasks;
  const count: Record<string, number> = {};
  return tasks.filter((t) => (count[t.category] = (count[t.category] ?? 0) + 1) <= n);
}

function initialModel(spec: ExperimentSpec, tok: Tokenizer, opts: RunOptions): { model: GPT; source: string | null } {
  const init = opts.initCheckpoint !== undefined ? { kind: 'checkpoint' as const, path: opts.initCheckpoint } : spec.init;
  if (init.kind === 'scratch') return { model: new GPT(defaultGPTConfig(tok.size, init.model ?? {}), opts.seed), source: null };
  let dir: string;
  if (init.kind === 'checkpoint') dir = init.path;
  else {
    dir = path.join(resultsDir(opts.preset.name, init.name, opts.seed, path.dirname(path.dirname(path.dirname(opts.out)))), 'checkpoint');
    if (!fs.existsSync(path.join(dir, 'model.json'))) {
      throw new Error(`${spec.name} starts from ${init.name}, whose checkpoint is missing at ${dir}: ` +
        `run \`npx toolrl run --config ${init.name} --preset ${opts.preset.name} --seed ${opts.seed}\` first`);
    }
  }
  return { model: loadCheckpoint(dir, { expectVocabFingerprint: tok.fingerprint }).model, source: dir };
}

/** Seed of the world-sample tasks (distinct from the splits' seeds, and deduplicated against them). */
export const WORLD_SAMPLE_SEED = 7_000_001;

function sftData(kind: SFTData, tok: Tokenizer, preset: Preset, dataDir: string, count = 0): TrainingSequence[] {
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

/** Run `spec` with `opts`; returns and writes the summary. */
export function runExperiment(spec: ExperimentSpec, opts: RunOptions): RunSummary {
  const t0 = Date.now();
  const dataDir = opts.dataDir ?? 'data';
  const overrides = opts.overrides ?? {};
  const stages = applyOverrides(spec.stages(opts.preset), overrides);
  fs.mkdirSync(opts.out, { recursive: true });
  const tok = loadTokenizer(path.join(dataDir, 'vocab.json'));
  const resume = opts.resume ? loadResumeState(opts.out, tok) : null;
  if (!opts.resume) {
    fs.writeFileSync(path.join(opts.out, 'run.json'), JSON.stringify({ config: spec.name, preset: opts.preset.name,
      seed: opts.seed, overrides, init: opts.initCheckpoint ?? null, backend: tf.getBackend() }, null, 2) + '\n');
    for (const f of ['rollouts.jsonl']) if (fs.existsSync(path.join(opts.out, f))) fs.unlinkSync(path.join(opts.out, f));
  }
  const metrics = new MetricsLog(path.join(opts.out, 'metrics.jsonl'), { truncate: !resume });
  if (resume) resume.trimLogs(metrics);

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
    name: spec.name, preset: opts.preset, seed: opts.seed, out: opts.out, tok, model, source, trainTasks,
    valTasks: perCategory(testTasks, opts.preset.valTasksPerCategory), metrics, globalStep: 0,
    progress: showProgress, resume, onStep: opts.onStep, sftFinalLoss: null,
  };

  try {
    for (let si = 0; si < stages.length; si++) {
      const stage: StageSpec = stages[si];
      if (resume && si < resume.stage) continue;
      if (resume && si === resume.stage) ctx.globalStep = resume.globalStepBase;
      if (stage.kind === 'sft') runSFT(ctx, si, sftData(stage.data, tok, opts.preset, dataDir, stage.count), stage.config, 'sft');
      else if (stage.kind === 'sft-interleaved') runInterleavedSFT(ctx, si, stage);
      else runGRPO(ctx, si, stage);
    }

    saveCheckpoint(path.join(opts.out, 'checkpoint'), model, { vocabFingerprint: tok.fingerprint, config: spec.name,
      preset: opts.preset.name, seed: opts.seed, overrides });

    // ---- final evaluation ----
    const evals: RunSummary['eval'] = {};
    for (const split of opts.evalSplits ?? EVAL_SPLITS) {
      const id = split === 'id' || split === 'id_constrained';
      const tasks = perCategory(id ? testTasks : loadTasks(split, dataDir), opts.preset.evalTasksPerCategory);
      const bar = new ProgressBar({ total: tasks.length, label: `${spec.name} eval ${split}`, silent: !showProgress });
      const res = evaluateModel(model, tok, tasks, {
        syntax: split === 'format_ood' ? 'python' : 'json',
        onProgress: (d) => bar.update(d),
        logitMask: split === 'id_constrained' ? structuralMask(tok) : undefined,
      });
      bar.finish(`mean ${res.mean.toFixed(3)}`);
      const { results: _omit, ...rest } = res;
      void _omit;
      evals[split] = rest;
    }
    const rlRecords = metrics.records.filter((r) => r.phase === 'grpo');
    const summary: RunSummary = {
      config: spec.name, title: spec.title, paper: spec.paper, preset: opts.preset.name, seed: opts.seed, overrides,
      eval: evals,
      rl: rlRecords.length ? summarizeRL(rlRecords) : null,
      sft: { stages: stages.filter((s) => s.kind !== 'grpo').length, finalLoss: ctx.sftFinalLoss },
      backend: tf.getBackend(),
      seconds: (Date.now() - t0) / 1000,
    };
    fs.writeFileSync(path.join(opts.out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    return summary;
  } finally {
    model.dispose();
  }
}

/** Run a registered experiment by name. */
export function runByName(name: string, opts: RunOptions): RunSummary {
  return runExperiment(getExperiment(name), opts);
}

export { CATEGORIES, readMetrics };
