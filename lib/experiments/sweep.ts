/**
 * Running many experiments: each run is a child process (`toolrl run ...`), at most `concurrency` at
 * once. Two cores and a wasm backend without threads mean one process per core is the fastest layout;
 * separate processes also keep one run's crash or leak from touching the others.
 *
 * A job whose spec starts from another experiment's checkpoint (init kind 'experiment') waits for that
 * job of the same preset and seed; if that one fails, the dependent fails without starting. A finished job
 * (a summary.json that parses and matches its run.json) is skipped (the results store is the checkpoint of
 * the whole study), unless `force`, or a pending job starts from its checkpoint and that is missing. A job
 * with a resume state but no valid summary was killed mid-run and continues with --resume; any other
 * unfinished job starts again with --force (its folder is cleared). A
 * folder locked by a live process (another sweep, a manual run) fails its job without being touched.
 *
 * Interrupted (SIGINT, SIGTERM), the sweep stops its children and waits for them before it returns; each
 * child also watches its parent (TOOLRL_PARENT_PID) and stops at its next step if the sweep dies unseen
 * (kill -9). Either way a rerun resumes what was cut off.
 */
import * as fs from 'fs';
import * as path from 'path';
import { spawn } from 'child_process';
import { ExperimentSpec } from './spec';
import { Preset, getPreset } from './presets';
import { getExperiment, listExperiments } from './configs';
import { resultsDir } from './runner';
import { formatDuration } from '../util/progress';
import { lockHolder } from '../util/lock';
import { checkpointDir, hasWeights, resumeDir, unfinishedReason } from './store';

export interface SweepJob {
  config: string;
  seed: number;
  preset: string;
  /** The regime (lib/experiments/regimes.ts); the store folder of `out` is the preset's in it. */
  regime: string;
  /** The run's folder: data/results/<preset>/<config>/seed-<n> (the runner finds checkpoints of init runs from it). */
  out: string;
}

export interface SweepFailure {
  job: SweepJob;
  /** Exit code of the child (null when it never started or was killed by a signal). */
  code: number | null;
  reason: string;
  /** The last lines of run.log. */
  logTail: string;
  /** Stopped or never started because the sweep was interrupted (a rerun continues it). */
  interrupted?: boolean;
}

/**
 * Starts one run and resolves with its exit code; stdout and stderr go to `logFile`; `abort` fires when the
 * sweep is interrupted (the run should then stop). Injectable for tests.
 */
export type Launcher = (job: SweepJob, args: string[], logFile: string, abort: AbortSignal) => Promise<number | null>;

export interface SweepOptions {
  /** Runs at once (default 2: one per core). */
  concurrency?: number;
  /** Re-run jobs whose summary.json exists. */
  force?: boolean;
  /** Extra arguments for `toolrl run` (e.g. ['--backend', 'wasm']). */
  extraArgs?: string[];
  launch?: Launcher;
  /** Where progress lines go (default stdout). */
  log?: (line: string) => void;
  /** Config name -> spec (default: the registry). */
  specOf?: (name: string) => ExperimentSpec;
  /** Signals that interrupt the sweep (default SIGINT and SIGTERM; [] for none). */
  signals?: NodeJS.Signals[];
}

/** The repository root: lib/experiments/ is two levels below it. */
const REPO_ROOT = path.resolve(__dirname, '..', '..');

/**
 * The default launcher: `node --import tsx lib/cli/main.ts run ...` from the repository root, told our pid
 * (TOOLRL_PARENT_PID) so that it stops if we die; SIGTERM when the sweep is interrupted.
 */
export const childLauncher: Launcher = (_job, args, logFile, abort) => new Promise((resolve, reject) => {
  const fd = fs.openSync(logFile, 'a');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('lib', 'cli', 'main.ts'), ...args],
      { cwd: REPO_ROOT, stdio: ['ignore', fd, fd], env: { ...process.env, TOOLRL_PARENT_PID: String(process.pid) } });
    const stop = () => child.kill('SIGTERM');
    if (abort.aborted) stop();
    else abort.addEventListener('abort', stop, { once: true });
    child.on('error', reject);
    child.on('close', (code) => {
      abort.removeEventListener('abort', stop);
      resolve(code);
    });
  } finally {
    fs.closeSync(fd); // the child holds its own copy of the descriptor
  }
});

/** `dir` as the child (cwd: the repository root) should see it: relative inside the repository, so run.log names no machine path. */
function childPath(dir: string): string {
  const rel = path.relative(REPO_ROOT, path.resolve(dir));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : path.resolve(dir);
}

const jobKey = (config: string, seed: number, preset: string, regime: string) => `${preset}:${regime}/${config}/seed-${seed}`;

function tail(file: string, lines = 20): string {
  if (!fs.existsSync(file)) return '(no run.log)';
  return fs.readFileSync(file, 'utf8').replace(/\r/g, '\n').split('\n').filter((l) => l.trim()).slice(-lines).join('\n');
}

/** The ID mean of a finished run's summary, or null when the file is missing or has none. */
function idMean(out: string): number | null {
  try {
    const s = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    return typeof s?.eval?.id?.mean === 'number' ? s.eval.id.mean : null;
  } catch {
    return null;
  }
}

/** Run `jobs` in list order as far as dependencies and `concurrency` allow; resolves with the failures. */
export function runSweep(jobs: SweepJob[], opts: SweepOptions = {}): Promise<SweepFailure[]> {
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 2));
  const launch = opts.launch ?? childLauncher;
  const log = opts.log ?? ((l: string) => process.stdout.write(l + '\n'));
  const specOf = opts.specOf ?? getExperiment;
  const byKey = new Map(jobs.map((j) => [jobKey(j.config, j.seed, j.preset, j.regime), j]));
  if (byKey.size !== jobs.length) throw new Error('runSweep: the job list holds the same config/seed/preset twice');
  // dependency of each job inside this sweep (outside it, the runner checks the checkpoint itself)
  const dep = new Map<SweepJob, SweepJob | undefined>();
  for (const j of jobs) {
    const init = specOf(j.config).init;
    dep.set(j, init.kind === 'experiment' ? byKey.get(jobKey(init.name, j.seed, j.preset, j.regime)) : undefined);
  }

  const state = new Map<SweepJob, 'pending' | 'running' | 'ok' | 'failed'>(jobs.map((j) => [j, 'pending']));
  const rerun = new Set<SweepJob>(); // finished runs that run again for their checkpoint (never resumed)
  const failures: SweepFailure[] = [];
  const durations = new Map<string, number[]>(); // config -> seconds of its finished runs
  const width = String(jobs.length).length;
  let counter = 0;
  const tag = (n: number, j: SweepJob) => `[${String(n).padStart(width)}/${jobs.length}] ${j.config} seed ${j.seed}`;
  // Configs differ by orders of magnitude (an evaluation takes a minute, an RL run most of an hour): a job is
  // estimated by its own config's finished runs, else by the slowest config seen so far.
  const eta = () => {
    if (!durations.size) return '';
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const slowest = Math.max(...Array.from(durations.values(), mean));
    const left = jobs.filter((j) => state.get(j) === 'pending' || state.get(j) === 'running'); // this one included
    const total = left.reduce((a, j) => a + (durations.has(j.config) ? mean(durations.get(j.config)!) : slowest), 0);
    return left.length ? ` | ${left.length} left, eta ${formatDuration(total / concurrency)}` : '';
  };
  /** `showLog`: print the tail of run.log (only for a run that this sweep started and that failed on its own). */
  const fail = (j: SweepJob, n: number, code: number | null, reason: string, showLog = false) => {
    const logFile = path.join(j.out, 'run.log');
    state.set(j, 'failed');
    const f: SweepFailure = { job: j, code, reason, logTail: tail(logFile) };
    failures.push(f);
    log(`${tag(n, j)} FAILED: ${reason}${eta()}`);
    if (showLog) log(`  last lines of ${logFile}:\n${f.logTail.split('\n').map((l) => '    ' + l).join('\n')}`);
  };

  // Finished runs are settled before anything starts, and reported in one line rather than one per run.
  // Checkpoints are not committed (megabytes each), so in a fresh clone a finished init run may lack the
  // weights its pending dependent starts from: such a run runs again (deterministic, so its results come
  // out as committed), and so on up the chain of inits.
  let skipped = 0;
  if (!opts.force) {
    for (const j of jobs) if (unfinishedReason(j.out) === null) state.set(j, 'ok');
    for (let changed = true; changed;) {
      changed = false;
      for (const j of jobs) {
        const d = dep.get(j);
        if (state.get(j) !== 'pending' || !d || state.get(d) !== 'ok' || hasWeights(checkpointDir(d.out))) continue;
        state.set(d, 'pending');
        rerun.add(d);
        changed = true;
        log(`re-running ${d.config} seed ${d.seed}: finished, but ${j.config} starts from its checkpoint, which is not here ` +
          `(checkpoints are not committed)`);
      }
    }
    skipped = jobs.filter((j) => state.get(j) === 'ok').length;
    if (skipped) log(`skipped ${skipped} of ${jobs.length} run(s): finished (summary.json matches run.json)`);
  }
  const aborter = new AbortController();
  let interrupted: string | null = null;

  return new Promise((resolve) => {
    let running = 0;
    const onSignal = (sig: NodeJS.Signals) => {
      if (interrupted) return;
      interrupted = sig;
      log(`interrupted (${sig}): stopping ${running} running run(s) and waiting for them; a rerun resumes them`);
      aborter.abort();
      if (running === 0) pump();
    };
    const signals = opts.signals ?? ['SIGINT', 'SIGTERM'];
    for (const sig of signals) process.on(sig, onSignal);
    const finish = () => {
      for (const sig of signals) process.removeListener(sig, onSignal);
      resolve(failures);
    };
    const start = (j: SweepJob) => {
      const n = ++counter;
      const d = dep.get(j);
      if (d && state.get(d) === 'failed') {
        fail(j, n, null, `its init run ${d.config} seed ${d.seed} failed`);
        return;
      }
      const holder = lockHolder(j.out);
      if (holder) {
        fail(j, n, null, `${j.out} is in use by process ${holder.pid} (since ${holder.started})`);
        return;
      }
      fs.mkdirSync(j.out, { recursive: true });
      const resume = !opts.force && !rerun.has(j) && resumeDir(j.out) !== null;
      const args = ['run', '--config', j.config, '--preset', j.preset, '--regime', j.regime, '--seed', String(j.seed), '--out', childPath(j.out),
        resume ? '--resume' : '--force', ...(opts.extraArgs ?? [])];
      const logFile = path.join(j.out, 'run.log');
      if (!resume) fs.writeFileSync(logFile, ''); // a resumed run appends to the log of the killed one
      state.set(j, 'running');
      running++;
      log(`${tag(n, j)} started${resume ? ' (resuming)' : ''}: log ${logFile}`);
      const t0 = Date.now();
      launch(j, args, logFile, aborter.signal).then((code) => ({ code, err: null as Error | null }), (err: Error) => ({ code: null, err }))
        .then(({ code, err }) => {
          running--;
          const secs = (Date.now() - t0) / 1000;
          const why = unfinishedReason(j.out);
          if (err) fail(j, n, null, `could not start: ${err.message}`, true);
          else if (interrupted && (code !== 0 || why !== null)) {
            fail(j, n, code, `stopped: interrupted by ${interrupted}`);
            failures[failures.length - 1].interrupted = true;
          } else if (code !== 0) fail(j, n, code, `exited with code ${code}`, true);
          else if (why !== null) fail(j, n, code, `exited 0 but left no finished run: ${why}`, true);
          else {
            state.set(j, 'ok');
            durations.set(j.config, [...(durations.get(j.config) ?? []), secs]);
            const id = idMean(j.out);
            log(`${tag(n, j)} done in ${formatDuration(secs)}${id === null ? '' : `: ID ${id.toFixed(3)}`}${eta()}`);
          }
          pump();
        });
    };
    // Start every job that is ready, in list order; finish when nothing runs and nothing can start.
    // A failed job settles at once and may free a job listed before it: sweep again until nothing moves.
    const pump = () => {
      let moved = true;
      while (!interrupted && moved && running < concurrency) {
        moved = false;
        for (const j of jobs) {
          if (running >= concurrency || interrupted) break;
          if (state.get(j) !== 'pending') continue;
          const d = dep.get(j);
          if (d && (state.get(d) === 'pending' || state.get(d) === 'running')) continue;
          start(j);
          moved = true;
        }
      }
      if (running === 0) {
        for (const j of jobs) {
          if (state.get(j) !== 'pending') continue;
          // interrupted: never started; otherwise it waits on a job that can never finish (a dependency cycle)
          fail(j, ++counter, null, interrupted ? `not started: interrupted by ${interrupted}` : 'dependency cycle');
          if (interrupted) failures[failures.length - 1].interrupted = true;
        }
        finish();
      }
    };
    pump();
  });
}

export interface PlanOptions {
  /** Only these configs (plus what they start from); default the regime's study (Regime.groups). */
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
  const selected = opts.only && opts.only.length ? opts.only.map((n) => find(n, '--only')) : specs.filter((s) => p.regime.groups.includes(s.group));
  const jobs: SweepJob[] = [];
  const seen = new Set<string>();
  const add = (s: ExperimentSpec, seed: number, chain: string[]) => {
    if (chain.includes(s.name)) throw new Error(`config "${s.name}": init dependency cycle ${[...chain, s.name].join(' -> ')}`);
    const key = jobKey(s.name, seed, p.name, p.regime.name);
    if (seen.has(key)) return;
    if (s.init.kind === 'experiment') add(find(s.init.name, `config "${s.name}" init`), seed, [...chain, s.name]);
    seen.add(key);
    jobs.push({ config: s.name, seed, preset: p.name, regime: p.regime.name, out: resultsDir(p.store, s.name, seed, opts.root) });
  };
  // seed-major: every config of seed 1 first, so an interrupted study still has one complete seed
  for (const seed of opts.seeds ?? p.seeds) for (const s of selected) add(s, seed, []);
  return jobs;
}
