/**
 * The plan of a study, shared by every way of running it (local child processes in sweep.ts, Slurm job
 * arrays in slurm.ts): which runs it holds (planJobs), which of them still need running and how
 * (decideRuns), and the `toolrl run` command line of each (runArgs). Keeping one implementation means a
 * study resumed on a cluster skips, resumes and restarts exactly the runs a local rerun would.
 *
 * The store decides (store.ts): a run whose summary.json parses and matches its run.json is finished and
 * skipped, unless `force`; a finished run runs again when a run still to do starts from its checkpoint and
 * that checkpoint is not here (checkpoints are not committed, so a fresh clone lacks them); an unfinished
 * run with a resume state continues with --resume; any other starts afresh with --force (its folder is
 * cleared).
 */
import * as path from 'path';
import { ExperimentSpec } from '../registry/spec';
import { Preset, getPreset, studyGroups } from '../registry/presets';
import { getExperiment, listExperiments } from '../registry/configs';
import { resultsDir } from '../run/runner';
import { checkpointDir, hasWeights, resumeDir, unfinishedReason } from '../store/folder';

export interface SweepJob {
  config: string;
  seed: number;
  preset: string;
  /** The regime (lib/experiments/registry/regimes.ts); the store folder of `out` is the preset's in it. */
  regime: string;
  /** The run's folder: data/results/<preset>/<config>/seed-<n> (the runner finds checkpoints of init runs from it). */
  out: string;
}

/** What a study does with one run: nothing (finished), continue it (--resume), or start it again (--force). */
export type RunAction = 'skip' | 'resume' | 'fresh';

export interface RunDecision {
  job: SweepJob;
  action: RunAction;
  /** The job of this list whose checkpoint this one starts from (init kind 'experiment'), if any. */
  init?: SweepJob;
}

export interface DecideOptions {
  /** Re-run finished jobs too. */
  force?: boolean;
  /** Config name -> spec (default: the registry). */
  specOf?: (name: string) => ExperimentSpec;
  /** Where the decisions worth a line go (skipped runs, finished runs that run again). */
  log?: (line: string) => void;
}

/** The repository root: lib/experiments/sweep/ is three levels below it. Runs start here. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * `dir` as a run started in the repository root should see it: relative inside the repository, so run.log names no
 * machine path.
 */
export function childPath(dir: string): string {
  const rel = path.relative(REPO_ROOT, path.resolve(dir));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.resolve(dir);
}

export const jobKey = (config: string, seed: number, preset: string, regime: string) =>
  `${preset}:${regime}/${config}/seed-${seed}`;

/** The `toolrl run` arguments of a job to run (action 'resume' or 'fresh'), then `extraArgs` (e.g. --backend wasm). */
export function runArgs(job: SweepJob, action: Exclude<RunAction, 'skip'>, extraArgs: string[] = []): string[] {
  return ['run', '--config', job.config, '--preset', job.preset, '--regime', job.regime, '--seed', String(job.seed),
    '--out', childPath(job.out), action === 'resume' ? '--resume' : '--force', ...extraArgs];
}

/** Decide, in list order, what each job of `jobs` needs (see the file comment); throws on a job listed twice. */
export function decideRuns(jobs: SweepJob[], opts: DecideOptions = {}): RunDecision[] {
  const specOf = opts.specOf ?? getExperiment;
  const log = opts.log ?? (() => undefined);
  const byKey = new Map(jobs.map((j) => [jobKey(j.config, j.seed, j.preset, j.regime), j]));
  if (byKey.size !== jobs.length) throw new Error('the job list holds the same config/seed/preset twice');
  const decisions = jobs.map((job): RunDecision => {
    const init = specOf(job.config).init;
    const dep = init.kind === 'experiment' ? byKey.get(jobKey(init.name, job.seed, job.preset, job.regime)) : undefined;
    const finished = !opts.force && unfinishedReason(job.out) === null;
    return { job, action: finished ? 'skip' : 'fresh', ...(dep ? { init: dep } : {}) };
  });
  if (opts.force) return decisions;
  const of = new Map(decisions.map((d) => [d.job, d]));
  // A finished init whose pending dependent needs its missing checkpoint runs again, fresh (never resumed:
  // a finished run has nothing to continue), and so on up the chain of inits.
  for (let changed = true; changed;) {
    changed = false;
    for (const d of decisions) {
      const init = d.init ? of.get(d.init)! : undefined;
      if (d.action === 'skip' || !init || init.action !== 'skip' || hasWeights(checkpointDir(init.job.out))) continue;
      init.action = 'fresh';
      changed = true;
      log(`re-running ${init.job.config} seed ${init.job.seed}: finished, but ${d.job.config} starts from its ` +
        `checkpoint, ` +
        'which is not here (checkpoints are not committed)');
    }
  }
  for (const d of decisions) {
    // an unfinished run that saved a resume state was killed mid-run: it continues where it was cut off
    if (d.action === 'fresh' && unfinishedReason(d.job.out) !== null && resumeDir(d.job.out) !== null) d.action =
      'resume';
  }
  const skipped = decisions.filter((d) => d.action === 'skip').length;
  if (skipped) log(`skipped ${skipped} of ${jobs.length} run(s): finished (summary.json matches run.json)`);
  return decisions;
}

export interface PlanOptions {
  /** Only these configs (plus what they start from); default the preset's study (presets.ts studyGroups). */
  only?: string[];
  /** Only these seeds (default: the preset's seeds). */
  seeds?: number[];
  root?: string;
  specs?: ExperimentSpec[];
}

/** The jobs of a study: configs x preset seeds, each preceded by the runs its init needs. */
export function planJobs(preset: Preset | string, opts: PlanOptions = {}): SweepJob[] {
  const p = typeof preset === 'string' ? getPreset(preset) : preset;
  const specs = opts.specs ?? listExperiments();
  const find = (name: string, what: string) => {
    const s = specs.find((x) => x.name === name);
    if (!s) throw new Error(`${what}: unknown config "${name}" (known: ${specs.map((x) => x.name).join(', ')})`);
    return s;
  };
  const selected = opts.only && opts.only.length ? opts.only.map((n) => find(n, '--only')) : specs.filter((s) =>
    studyGroups(p).includes(s.group));
  const jobs: SweepJob[] = [];
  const seen = new Set<string>();
  const add = (s: ExperimentSpec, seed: number, chain: string[]) => {
    if (chain.includes(s.name)) throw new Error(`config "${s.name}": init dependency cycle ` +
      `${[...chain, s.name].join(' -> ')}`);
    const key = jobKey(s.name, seed, p.name, p.regime.name);
    if (seen.has(key)) return;
    if (s.init.kind === 'experiment') add(find(s.init.name, `config "${s.name}" init`), seed, [...chain, s.name]);
    seen.add(key);
    jobs.push({ config: s.name, seed, preset: p.name, regime: p.regime.name,
      out: resultsDir(p.store, s.name, seed, opts.root) });
  };
  // seed-major: every config of seed 1 first, so an interrupted study still has one complete seed
  for (const seed of opts.seeds ?? p.seeds) for (const s of selected) add(s, seed, []);
  return jobs;
}
