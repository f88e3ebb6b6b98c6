/**
 * A run folder of the results store and what it belongs to.
 *
 * `run.json` is the run's identity: config, preset, seed, overrides, initial checkpoint, tfjs backend and a
 * fingerprint of the data it read. The same identity is stored with the resume state, so `--resume` can
 * refuse to continue another run's weights, and summary.json repeats its main fields, so a run counts as
 * finished only when its summary parses and belongs to the run.json next to it.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { readJsonFile } from '../util/atomic';
import { LOCK_FILE } from '../util/lock';
import { DEFAULT_REGIME } from './regimes';

/** Where run folders live: `<root>/<preset>/<config>/seed-<n>/` (every command's `--results` default). */
export const DEFAULT_RESULTS_ROOT = 'data/results';

/** Whether `root` is the default store, so a suggested command needs no `--results`. */
export const isDefaultResultsRoot = (root: string): boolean => path.resolve(root) === path.resolve(DEFAULT_RESULTS_ROOT);

export type Overrides = Record<string, string | number | boolean>;

export interface RunIdentity {
  config: string;
  preset: string;
  /** The regime (lib/experiments/regimes.ts); absent in run folders written before regimes: strong. */
  regime?: string;
  seed: number;
  overrides: Overrides;
  /** A checkpoint folder given with --init, else null. */
  init: string | null;
  backend: string;
  /** sha256 prefix of the data files a run reads (vocabulary, task splits, corpus). */
  data: string;
  /** The run this one branched from, and the global step (toolrl run --branch DIR --at STEP); absent otherwise. */
  branch?: { from: string; step: number } | null;
}

/** Files of a run folder that are results (anything else, like the launcher's run.log, is not). */
export const RESULT_ENTRIES = ['run.json', 'metrics.jsonl', 'rollouts.jsonl', 'summary.json', 'checkpoint', 'best', 'resume', 'resume.tmp', 'resume.old'];

/**
 * Folders a resume state can be in, in the order a reader takes them: a save writes `resume.tmp/` (its
 * state.json last), moves `resume/` aside to `resume.old/`, renames `resume.tmp/` to `resume/`, then
 * removes `resume.old/`, always deleting state.json first. So a state.json marks a complete state, and
 * at every instant of a save, even one cut by kill -9, one of these folders holds one.
 */
export const RESUME_DIRS = ['resume', 'resume.tmp', 'resume.old'];

/** Where a run leaves its final weights: what the runs that start from it load. */
export const checkpointDir = (out: string): string => path.join(out, 'checkpoint');

/** Whether a checkpoint folder holds weights (its model.json). */
export const hasWeights = (dir: string): boolean => fs.existsSync(path.join(dir, 'model.json'));

/** The complete resume state folder of `out`, or null when there is none. */
export function resumeDir(out: string): string | null {
  for (const d of RESUME_DIRS) if (fs.existsSync(path.join(out, d, 'state.json'))) return path.join(out, d);
  return null;
}

/** Entries a --force clear keeps: the lock (held by the clearing process) and run.log (open in the launcher). */
const KEEP_ON_CLEAR = [LOCK_FILE, 'run.log'];

/** Fingerprint of the data a run reads: a change in any of these files makes another experiment. */
export function dataFingerprint(dataDir: string): string {
  const h = crypto.createHash('sha256');
  for (const rel of ['vocab.json', 'corpus.jsonl', ...['train', 'test', 'format_ood', 'content_ood'].map((s) => `tasks/${s}.jsonl`)]) {
    const file = path.join(dataDir, rel);
    h.update(rel + '\0');
    if (fs.existsSync(file)) h.update(fs.readFileSync(file));
    h.update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

/** The result entries present in `dir` (empty when it is missing or holds none). */
export function resultEntries(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((e) => RESULT_ENTRIES.includes(e));
}

/** Remove everything in `dir` except the lock and run.log, so a fresh run starts from nothing. */
export function clearRunFolder(dir: string): void {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir)) {
    if (!KEEP_ON_CLEAR.includes(e)) fs.rmSync(path.join(dir, e), { recursive: true, force: true });
  }
}

/** Fields of two identities that differ, as "field: a vs b" (only fields present in both when `shared`). */
export function identityDiff(a: Partial<RunIdentity>, b: Partial<RunIdentity>, shared = false): string[] {
  const out: string[] = [];
  for (const k of ['config', 'preset', 'regime', 'seed', 'overrides', 'init', 'backend', 'data', 'branch'] as (keyof RunIdentity)[]) {
    if (k !== 'regime' && shared && (a[k] === undefined || b[k] === undefined)) continue;
    const fill = (v: unknown) => (k === 'regime' ? v ?? DEFAULT_REGIME : v ?? null); // a run of before regimes ran in the strong one
    const x = JSON.stringify(canonical(fill(a[k])));
    const y = JSON.stringify(canonical(fill(b[k])));
    if (x !== y) out.push(`${k} ${x} vs ${y}`);
  }
  return out;
}

/** Objects with sorted keys, so {a, b} and {b, a} compare equal. */
function canonical(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, canonical(o[k])]));
}

/** One line naming a run: "vanilla-rl, preset smoke, seed 1, overrides {...}". */
export function describeIdentity(id: Partial<RunIdentity>): string {
  const ov = id.overrides && Object.keys(id.overrides).length ? `, overrides ${JSON.stringify(id.overrides)}` : '';
  const regime = id.regime && id.regime !== DEFAULT_REGIME ? `, regime ${id.regime}` : '';
  return `${id.config}, preset ${id.preset}${regime}, seed ${id.seed}${ov}${id.init ? `, init ${id.init}` : ''}, backend ${id.backend}`;
}

/** Read `dir/run.json` (errors name the file). */
export function readRunJson(dir: string): Partial<RunIdentity> {
  return readJsonFile<Partial<RunIdentity>>(path.join(dir, 'run.json'), 'run.json');
}

/**
 * Whether `dir` holds a finished run: a summary.json that parses and names the same config, preset, seed,
 * overrides and backend as run.json. Returns null when finished, else why not.
 */
export function unfinishedReason(dir: string): string | null {
  const summaryFile = path.join(dir, 'summary.json');
  if (!fs.existsSync(summaryFile)) return `no ${summaryFile}`;
  try {
    const summary = readJsonFile<Partial<RunIdentity>>(summaryFile, 'summary');
    const run = readRunJson(dir);
    if (!summary || typeof summary !== 'object') return `${summaryFile} is not an object`;
    const diff = identityDiff(summary, run).filter((d) => !/^(init|data) /.test(d));
    return diff.length ? `${summaryFile} does not match run.json (${diff.join('; ')})` : null;
  } catch (e) {
    return (e as Error).message;
  }
}

export function isFinished(dir: string): boolean {
  return unfinishedReason(dir) === null;
}
