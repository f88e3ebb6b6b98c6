/**
 * A run folder of the results store and what it belongs to.
 *
 * `run.json` is the run's identity: config, preset, seed, overrides, initial checkpoint, tfjs backend and a
 * fingerprint of the data it read. The same identity is stored with the resume state, so `--resume` can
 * refuse to continue another run's weights, and summary.json repeats its main fields, so a run counts as
 * finished only when its summary parses and belongs to the run.json next to it.
 *
 * A folder is the tool's only where it says so: a run.json of ours. A fresh run refuses a folder that holds
 * anything but the launcher's run.log and lock without one, and `--force` removes only the entries the tool
 * writes (RUN_ENTRIES), so a user's file in a run folder survives every command. RunFolder owns that
 * lifecycle (checks, lock, clear, identity, atomic writes); the runner only runs stages inside it.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { readJsonFile, writeJsonAtomic } from '../../util/atomic';
import { EXIT, Refusal } from '../../util/errors';
import { LOCK_FILE, acquireLock, inUse, lockHolder } from '../../util/lock';
import { DEFAULT_REGIME } from '../registry/regimes';
import type { DivergedInfo } from '../../train/diverged';

/** Where run folders live: `<root>/<preset>/<config>/seed-<n>/` (every command's `--results` default). */
export const DEFAULT_RESULTS_ROOT = 'data/results';

/** Whether `root` is the default store, so a suggested command needs no `--results`. */
export const isDefaultResultsRoot = (root: string): boolean =>
  path.resolve(root) === path.resolve(DEFAULT_RESULTS_ROOT);

export type Overrides = Record<string, string | number | boolean>;

export interface RunIdentity {
  config: string;
  preset: string;
  /** The regime (lib/experiments/registry/regimes.ts); absent in run folders written before regimes: strong. */
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

/** Written by a run that diverged (lib/train/diverged.ts): where, which quantity, at which learning rate. */
export const DIVERGED_FILE = 'diverged.json';

/** Files of a run folder that are results (anything else, like the launcher's run.log, is not). */
export const RESULT_ENTRIES = ['run.json', 'metrics.jsonl', 'rollouts.jsonl', 'summary.json', 'checkpoint', 'best',
  'resume', 'resume.tmp', 'resume.old', DIVERGED_FILE];

/** The committed excerpt of rollouts.jsonl (lib/experiments/store/rollout_sample.ts). */
export const ROLLOUT_SAMPLE_FILE = 'rollouts-sample.jsonl';

/**
 * Every entry the tool writes into a run folder: the results, the rollout excerpt, the branch points
 * (lib/experiments/store/branch.ts), the launcher's run.log (lib/experiments/sweep/local.ts) and the lock. A run folder
 * may hold anything else too (notes, a paper draft): the tool never removes it, not even with --force.
 */
export const RUN_ENTRIES = [...RESULT_ENTRIES, ROLLOUT_SAMPLE_FILE, 'branches', 'run.log', LOCK_FILE];

/** Entries a --force clear keeps: the lock (held by the clearing process) and run.log (open in the launcher). */
const KEEP_ON_CLEAR = [LOCK_FILE, 'run.log'];

/**
 * The staging folder of a --force clear: the old entries are moved into it, then it is deleted. While it
 * exists the run is not finished (unfinishedReason), so a clear that could not delete it is rerun, not skipped.
 */
export const CLEARING_DIR = '.clearing';

/** The file operations of a clear: a seam where a test makes one fail (as root, chmod stops neither). */
export const clearOps = {
  rename: (from: string, to: string): void => fs.renameSync(from, to),
  remove: (dir: string): void => fs.rmSync(dir, { recursive: true, force: true }),
};

/** Whether `name` is an entry the tool writes: in RUN_ENTRIES, CLEARING_DIR, or the atomic-write temp file of one. */
export function isToolEntry(name: string): boolean {
  if (RUN_ENTRIES.includes(name) || name === CLEARING_DIR) return true;
  const m = /^\.(.+)\.\d+\.tmp$/.exec(name); // lib/util/atomic.ts atomicTempName
  return m !== null && RUN_ENTRIES.includes(m[1]);
}

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

/** Fingerprint of the data a run reads: a change in any of these files makes another experiment. */
export function dataFingerprint(dataDir: string): string {
  const h = crypto.createHash('sha256');
  for (const rel of ['vocab.json', 'corpus.jsonl', ...['train', 'test', 'format_ood',
    'content_ood'].map((s) => `tasks/${s}.jsonl`)]) {
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

/** Fields of two identities that differ, as "field: a vs b" (only fields present in both when `shared`). */
export function identityDiff(a: Partial<RunIdentity>, b: Partial<RunIdentity>, shared = false): string[] {
  const out: string[] = [];
  for (const k of ['config', 'preset', 'regime', 'seed', 'overrides', 'init', 'backend', 'data',
    'branch'] as (keyof RunIdentity)[]) {
    if (k !== 'regime' && shared && (a[k] === undefined || b[k] === undefined)) continue;
    // a run of before regimes ran in the strong one
    const fill = (v: unknown) => (k === 'regime' ? v ?? DEFAULT_REGIME : v ?? null);
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
  const init = id.init ? `, init ${id.init}` : '';
  return `${id.config}, preset ${id.preset}${regime}, seed ${id.seed}${ov}${init}, backend ${id.backend}`;
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
  const staging = path.join(dir, CLEARING_DIR);
  if (fs.existsSync(staging)) return `${staging} exists: a --force clear did not finish (the next --force ends it)`;
  const diverged = divergedReason(dir);
  if (diverged) return diverged;
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

/**
 * "diverged at grpo step 2 (the logits are NaN at learning rate 1e+30)" for a run that wrote diverged.json, else null.
 */
export function divergedReason(dir: string): string | null {
  const file = path.join(dir, DIVERGED_FILE);
  if (!fs.existsSync(file)) return null;
  try {
    const d = readJsonFile<DivergedInfo>(file, 'diverged');
    return `diverged at ${d.phase} step ${d.step} of stage ${d.stage} (${d.quantity} ${d.value} at learning rate ` +
      `${d.lr})`;
  } catch (e) {
    return `diverged (${(e as Error).message})`;
  }
}

export function isFinished(dir: string): boolean {
  return unfinishedReason(dir) === null;
}

/** How a run uses its folder: a fresh start (refusing results), a fresh start over old results, a continuation. */
export type RunMode = 'fresh' | 'force' | 'resume';

export const runMode = (o: { resume?: boolean; force?: boolean }): RunMode =>
  (o.resume ? 'resume' : o.force ? 'force' : 'fresh');

/**
 * `run.json` when it is an identity of ours (config, preset, seed, overrides), null when absent; a Refusal otherwise.
 */
function ownIdentity(dir: string): Partial<RunIdentity> | null {
  const file = path.join(dir, 'run.json');
  if (!fs.existsSync(file)) return null;
  let v: Partial<RunIdentity>;
  try {
    v = readRunJson(dir);
  } catch (e) {
    throw new Refusal(`${(e as Error).message}: not a run folder of this tool, so nothing in it is cleared`,
      EXIT.notARunFolder);
  }
  if (!v || typeof v !== 'object' || typeof v.config !== 'string' || typeof v.preset !== 'string' ||
    typeof v.seed !== 'number') {
    throw new Refusal(`${file} is not a run identity of this tool (no config, preset and seed): nothing in ${dir} ` +
      `is cleared`, EXIT.notARunFolder);
  }
  return v;
}

const listed = (names: string[]) => names.slice(0, 5).join(', ') +
  (names.length > 5 ? `, ... (${names.length} entries)` : '');

/**
 * One run's folder and its lifecycle: `check` (touching nothing), `open` (lock, check again, clear or verify,
 * write run.json), atomic writes of its files, `close` (release the lock; a folder the run created and left
 * empty goes too). Every refusal is a Refusal with its exit code (lib/util/errors.ts).
 */
export class RunFolder {
  private release: (() => void) | null = null;
  private created = false;

  constructor(readonly dir: string) {}

  path(name: string): string {
    return path.join(this.dir, name);
  }

  /** Refuse, naming the folder and why, when a run in `mode` may not use it. Writes nothing. */
  check(mode: RunMode): void {
    const dir = this.dir;
    if (fs.existsSync(dir) && !fs.statSync(dir).isDirectory()) throw new Refusal(`${dir} is not a folder`,
      EXIT.notARunFolder);
    const holder = fs.existsSync(dir) ? lockHolder(dir) : null;
    if (holder) throw inUse('run folder', dir, holder);
    if (mode === 'resume') {
      if (resumeDir(dir) === null) {
        throw new Refusal(`--resume: no resume state in ${path.join(dir, 'resume')} (a run saves one every ` +
          `checkpointEvery RL steps)`, EXIT.cannotResume);
      }
      if (unfinishedReason(dir) === null) {
        throw new Refusal(`--resume: ${dir} holds a finished run (summary.json); nothing to resume (--force starts ` +
          `it again)`, EXIT.cannotResume);
      }
      return; // a continuation removes nothing
    }
    if (!fs.existsSync(dir)) return;
    if (ownIdentity(dir) === null) {
      const others = fs.readdirSync(dir).filter((e) => !KEEP_ON_CLEAR.includes(e)).sort();
      if (others.length) {
        throw new Refusal(`${dir} is not a run folder of this tool: it holds ${listed(others)} and no run.json; ` +
          'a run never removes files it did not write, so give it an empty or new --out', EXIT.notARunFolder);
      }
    }
    const held = resultEntries(dir);
    if (mode === 'fresh' && held.length) {
      const resumable = resumeDir(dir) !== null && unfinishedReason(dir) !== null;
      throw new Refusal(`${dir} already holds results (${held.join(', ')}): pass --force to remove them (only the ` +
        `entries a run ` +
        `writes) and start again${resumable ? ', or --resume to continue the killed run' : ''}`, EXIT.holdsResults);
    }
  }

  /**
   * Take the folder for the run `identity`: lock it, check it again under the lock, then for a fresh start
   * clear the tool's entries (force) and write run.json, for --resume check that run.json names this run.
   */
  open(identity: RunIdentity, mode: RunMode): void {
    this.created = !fs.existsSync(this.dir);
    this.release = acquireLock(this.dir, 'run folder');
    try {
      this.check(mode);
      if (mode === 'resume') this.checkResumeIdentity(identity);
      else {
        if (mode === 'force') this.clear();
        this.writeJson('run.json', identity);
      }
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /** Release the lock; a folder that open() created and that is still empty is removed. */
  close(): void {
    this.release?.();
    this.release = null;
    if (this.created && fs.existsSync(this.dir) && fs.readdirSync(this.dir).length === 0) fs.rmdirSync(this.dir);
    this.created = false;
  }

  /**
   * Remove the entries the tool writes (but the lock and run.log), nothing else, all or nothing: they are
   * moved into CLEARING_DIR first (a failed move puts back what was moved, and throws naming the entry),
   * then that folder is deleted. run.json stays until open() replaces it, so the folder stays ours throughout.
   */
  clear(): void {
    if (!fs.existsSync(this.dir)) return;
    const staging = this.path(CLEARING_DIR);
    this.removeStaging(staging, 'left by an earlier --force'); // a clear cut short (a failed delete, a kill): finish it
    const entries = this.entriesToClear();
    if (!entries.length) return;
    fs.mkdirSync(staging);
    this.moveAside(entries, staging);
    this.removeStaging(staging, 'holding the old results');
  }

  /** The entries a clear removes, summary.json first: a clear cut by kill -9 then leaves an unfinished run. */
  private entriesToClear(): string[] {
    const kept = [...KEEP_ON_CLEAR, 'run.json', CLEARING_DIR];
    const names = fs.readdirSync(this.dir).filter((e) => isToolEntry(e) && !kept.includes(e));
    return names.sort((a, b) => Number(b === 'summary.json') - Number(a === 'summary.json'));
  }

  /** Move `entries` into `staging`; if one cannot be moved, move the others back and throw naming it. */
  private moveAside(entries: string[], staging: string): void {
    const moved: string[] = [];
    for (const e of entries) {
      try {
        clearOps.rename(this.path(e), path.join(staging, e));
        moved.push(e);
      } catch (err) {
        const stuck = this.moveBack(moved, staging);
        const state = stuck.length ? `; ${stuck.join(', ')} could not be moved back from ${staging}, so the run ` +
          'reads as unfinished' : '; nothing was removed';
        const why = (err as Error).message;
        throw new Error(`--force: cannot clear ${this.dir}: cannot move ${e} aside (${why})${state}`);
      }
    }
  }

  /** Put `moved` back from `staging` (then remove it, empty); returns the entries that could not go back. */
  private moveBack(moved: string[], staging: string): string[] {
    const stuck: string[] = [];
    for (const e of [...moved].reverse()) {
      // summary.json (moved first) goes back last, and only when all else did: a run missing entries is not finished
      if (e === 'summary.json' && stuck.length) {
        stuck.push(e);
        continue;
      }
      try {
        clearOps.rename(path.join(staging, e), this.path(e));
      } catch {
        stuck.push(e);
      }
    }
    if (!stuck.length) fs.rmdirSync(staging);
    return stuck;
  }

  /** Delete the staging folder if there is one; while it stays, the run reads as unfinished (unfinishedReason). */
  private removeStaging(staging: string, what: string): void {
    if (!fs.existsSync(staging)) return;
    try {
      clearOps.remove(staging);
    } catch (err) {
      throw new Error(`--force: cannot delete ${staging} (${what}): ${(err as Error).message}; the run reads as ` +
        'unfinished until a later --force deletes it');
    }
  }

  /** `value` as JSON in the folder's file `name`, atomically (a failed write names the file). */
  writeJson(name: string, value: unknown): void {
    writeJsonAtomic(this.path(name), value);
  }

  private checkResumeIdentity(identity: RunIdentity): void {
    if (!fs.existsSync(this.path('run.json'))) return; // the resume state's own identity is checked when it loads
    const old = readRunJson(this.dir);
    const diff = identityDiff(old, identity, true); // a run.json of an older version lacks the data fingerprint
    if (diff.length) {
      throw new Refusal(`--resume: ${this.path('run.json')} is another run (${describeIdentity(old)}), ` +
        `not this one (${describeIdentity(identity)}): ${diff.join('; ')}`, EXIT.cannotResume);
    }
  }
}
