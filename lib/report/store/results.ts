/**
 * Reading the results store back: data/results/<preset>/<config>/seed-<n>/{run.json, metrics.jsonl,
 * summary.json}. Everything the report shows comes from here, so a figure can always be traced back to
 * the file it was computed from.
 *
 * A seed folder without summary.json is a run that is still going (or died): it is listed as incomplete,
 * not reported. A file that is present but broken is an error that names the file and the field, because
 * a silently skipped seed would shift a mean without anyone noticing.
 */
import * as fs from 'fs';
import * as path from 'path';
import { ExperimentSpec } from '../../experiments/registry/spec';
import { listExperiments } from '../../experiments/registry/configs';
import { DEFAULT_RESULTS_ROOT, divergedReason } from '../../experiments/store/folder';
import type { RunSummary } from '../../experiments/run/runner';
import { MetricRecord } from '../../train/records';
import { readMetrics } from '../../train/metrics';

export interface SeedResult {
  seed: number;
  dir: string;
  summary: RunSummary;
  /** metrics.jsonl in order ([] when the file is absent). */
  metrics: MetricRecord[];
}

export interface ExperimentResults {
  spec: ExperimentSpec;
  /** Seeds with a summary.json, sorted by seed. */
  seeds: SeedResult[];
}

export interface ResultsStore {
  preset: string;
  root: string;
  /** Registry order; only experiments with at least one finished seed. */
  experiments: ExperimentResults[];
  /** "<config>/seed-<n>" folders without summary.json (running or failed). */
  incomplete: string[];
  /** Folders under <root>/<preset> that name no registered experiment. */
  unknown: string[];
  /** Finished branch runs under <root>/<preset>/branches/ (toolrl run --branch), by folder name. */
  branches: BranchResult[];
}

/** A run that continued another run from its branch point under another method (lib/experiments/store/branch.ts). */
export interface BranchResult {
  name: string;
  dir: string;
  config: string;
  /** The parent run folder and the RL step it branched at. */
  from: string;
  step: number;
  summary: RunSummary;
  metrics: MetricRecord[];
  /** The parent's metrics and summary (when its folder is there), to show both. */
  parentMetrics: MetricRecord[];
  parentSummary: RunSummary | null;
}

/** Branch runs under `dir` (each a run folder whose run.json names its parent); [] when there is none. */
function loadBranches(dir: string): BranchResult[] {
  if (!fs.existsSync(dir)) return [];
  const out: BranchResult[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const runDir = path.join(dir, entry.name);
    const [runFile, summaryFile] = [path.join(runDir, 'run.json'), path.join(runDir, 'summary.json')];
    if (!entry.isDirectory() || !fs.existsSync(runFile) || !fs.existsSync(summaryFile)) continue;
    const run = readJson(runFile) as { config?: string; branch?: { from: string; step: number } | null };
    if (!run.branch || typeof run.branch.from !== 'string' || !Number.isInteger(run.branch.step)) {
      throw new Error(`${runFile}: field branch: expected {from, step} (a run under branches/ continues another)`);
    }
    const [parentFile, parentSummaryFile] = [path.join(run.branch.from, 'metrics.jsonl'),
      path.join(run.branch.from, 'summary.json')];
    out.push({
      name: entry.name, dir: runDir, config: String(run.config), from: run.branch.from, step: run.branch.step,
      summary: validateSummary(summaryFile, readJson(summaryFile)),
        metrics: readMetrics(path.join(runDir, 'metrics.jsonl')),
      parentMetrics: fs.existsSync(parentFile) ? readMetrics(parentFile) : [],
      parentSummary: fs.existsSync(parentSummaryFile) ? validateSummary(parentSummaryFile,
        readJson(parentSummaryFile)) : null,
    });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`${file}: cannot read (${(e as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: not valid JSON (${(e as Error).message})`);
  }
}

/** Throws "<file>: <field>: expected ..., got ..." unless obj[field] is a finite number. */
function needNumber(file: string, field: string, v: unknown): void {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    throw new Error(`${file}: field ${field}: expected a number, got ${JSON.stringify(v)}`);
  }
}

function needObject(file: string, field: string, v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    throw new Error(`${file}: field ${field}: expected an object, got ${JSON.stringify(v)}`);
  }
  return v as Record<string, unknown>;
}

/** Check the parts of a RunSummary that the tables read, so a broken file fails here with its name. */
export function validateSummary(file: string, raw: unknown): RunSummary {
  const s = needObject(file, '(top level)', raw);
  const evals = needObject(file, 'eval', s.eval);
  for (const [split, v] of Object.entries(evals)) {
    const e = needObject(file, `eval.${split}`, v);
    needNumber(file, `eval.${split}.mean`, e.mean);
    const per = needObject(file, `eval.${split}.perCategory`, e.perCategory);
    for (const [cat, c] of Object.entries(per)) {
      needNumber(file, `eval.${split}.perCategory.${cat}.accuracy`,
        needObject(file, `eval.${split}.perCategory.${cat}`, c).accuracy);
    }
    const states = needObject(file, `eval.${split}.states`, e.states);
    for (const [k, x] of Object.entries(states)) needNumber(file, `eval.${split}.states.${k}`, x);
  }
  if (s.rl !== null && s.rl !== undefined) {
    const rl = needObject(file, 'rl', s.rl);
    for (const k of ['peakValAccuracy', 'finalValAccuracy', 'finalReward']) needNumber(file, `rl.${k}`, rl[k]);
    if (rl.collapseStep !== null) needNumber(file, 'rl.collapseStep', rl.collapseStep);
    const fs_ = needObject(file, 'rl.finalStates', rl.finalStates);
    for (const [k, x] of Object.entries(fs_)) needNumber(file, `rl.finalStates.${k}`, x);
  }
  return { ...(s as unknown as RunSummary), rl: (s.rl ?? null) as RunSummary['rl'] };
}

const SEED_DIR = /^seed-(\d+)$/;

/** Load every finished run of `preset` under `root`, grouped by experiment in registry order. */
export function loadResults(preset: string, root = DEFAULT_RESULTS_ROOT,
  specs: ExperimentSpec[] = listExperiments()): ResultsStore {
  const presetDir = path.join(root, preset);
  const store: ResultsStore = { preset, root, experiments: [], incomplete: [], unknown: [], branches: [] };
  if (!fs.existsSync(presetDir)) return store;
  store.branches = loadBranches(path.join(presetDir, 'branches'));
  const known = new Set(specs.map((s) => s.name));
  for (const entry of fs.readdirSync(presetDir, { withFileTypes: true })) {
    // `report/` is where the report itself goes by default, `slurm/` the scripts and logs of `reproduce --slurm`;
    // anything else unknown is worth a note.
    if (entry.isDirectory() && !known.has(entry.name) && !['report', 'branches',
      'slurm'].includes(entry.name)) store.unknown.push(entry.name);
  }
  for (const spec of specs) {
    const dir = path.join(presetDir, spec.name);
    if (!fs.existsSync(dir)) continue;
    const seeds: SeedResult[] = [];
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const m = entry.isDirectory() ? SEED_DIR.exec(entry.name) : null;
      if (!m) continue;
      const seedDir = path.join(dir, entry.name);
      const summaryFile = path.join(seedDir, 'summary.json');
      if (!fs.existsSync(summaryFile)) {
        const diverged = divergedReason(seedDir);
        store.incomplete.push(`${spec.name}/${entry.name}${diverged ? ` (${diverged})` : ''}`);
        continue;
      }
      const summary = validateSummary(summaryFile, readJson(summaryFile));
      if (summary.config !== undefined && summary.config !== spec.name) {
        throw new Error(`${summaryFile}: field config: expected "${spec.name}" (the folder name), got ` +
          `"${summary.config}"`);
      }
      const metricsFile = path.join(seedDir, 'metrics.jsonl');
      const metrics = fs.existsSync(metricsFile) ? readMetrics(metricsFile) : [];
      seeds.push({ seed: Number(m[1]), dir: seedDir, summary, metrics });
    }
    seeds.sort((a, b) => a.seed - b.seed);
    if (seeds.length) store.experiments.push({ spec, seeds });
  }
  return store;
}

/** The experiments of one report group, in registry order. */
export function byGroup(store: ResultsStore, group: ExperimentSpec['group']): ExperimentResults[] {
  return store.experiments.filter((e) => e.spec.group === group);
}
