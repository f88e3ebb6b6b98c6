/**
 * Running many experiments: each run is a child process (`toolrl run ...`), at most `concurrency` at
 * once. Two cores and a wasm backend without threads mean one process per core is the fastest layout;
 * separate processes also keep one run's crash or leak from touching the others.
 *
 * Which runs need running, and with --resume or --force, is decided by plan.ts (decideRuns), the same
 * rules as a study submitted to Slurm (slurm.ts). A job whose spec starts from another experiment's
 * checkpoint (init kind 'experiment') waits for that job of the same preset and seed; if that one fails,
 * the dependent fails without starting. A folder locked by a live process (another sweep, a manual run)
 * fails its job without being touched.
 *
 * Interrupted (SIGINT, SIGTERM), the sweep stops its children and waits for them before it returns; each
 * child also watches its parent (TOOLRL_PARENT_PID) and stops at its next step if the sweep dies unseen
 * (kill -9). Either way a rerun resumes what was cut off.
 */
import * as fs from 'fs';
import * as path from 'path';
import { spawn } from 'child_process';
import { ExperimentSpec } from './spec';
import { formatDuration } from '../util/progress';
import { lockHolder } from '../util/lock';
import { unfinishedReason } from './store';
import { REPO_ROOT, RunAction, SweepJob, decideRuns, runArgs } from './plan';

export { planJobs, PlanOptions, SweepJob } from './plan';

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
  // skip / resume / fresh, and the init job of each: the same decisions as a Slurm submission (plan.ts)
  const decisions = decideRuns(jobs, { force: opts.force, specOf: opts.specOf, log });
  const action = new Map<SweepJob, RunAction>(decisions.map((d) => [d.job, d.action]));
  const dep = new Map<SweepJob, SweepJob | undefined>(decisions.map((d) => [d.job, d.init]));
  const state = new Map<SweepJob, 'pending' | 'running' | 'ok' | 'failed'>(jobs.map((j) => [j, action.get(j) === 'skip' ? 'ok' : 'pending']));
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
      const resume = action.get(j) === 'resume';
      const args = runArgs(j, resume ? 'resume' : 'fresh', opts.extraArgs ?? []);
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
