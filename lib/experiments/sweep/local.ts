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
import { ExperimentSpec } from '../registry/spec';
import { formatDuration } from '../../util/progress';
import { lockHolder } from '../../util/lock';
import { unfinishedReason } from '../store/folder';
import { REPO_ROOT, RunAction, SweepJob, decideRuns, runArgs } from './plan';


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
  const all = fs.readFileSync(file, 'utf8').replace(/\r/g, '\n').split('\n');
  return all.filter((l) => l.trim()).slice(-lines).join('\n');
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
  return new Promise((resolve) => {
    const sweep = new Sweep(jobs, opts, resolve);
    const signals = opts.signals ?? ['SIGINT', 'SIGTERM'];
    const onSignal = (sig: NodeJS.Signals) => sweep.interrupt(sig);
    for (const sig of signals) process.on(sig, onSignal);
    sweep.onFinish = () => { for (const sig of signals) process.removeListener(sig, onSignal); };
    sweep.pump();
  });
}

type JobState = 'pending' | 'running' | 'ok' | 'failed';

/** One sweep's bookkeeping: the state of every job, the runs going, the failures, the timings behind the eta. */
class Sweep {
  private readonly concurrency: number;
  private readonly launch: Launcher;
  private readonly log: (line: string) => void;
  private readonly action: Map<SweepJob, RunAction>;
  /** The job each job starts from (its init run), when that is one of the jobs. */
  private readonly dep: Map<SweepJob, SweepJob | undefined>;
  private readonly state: Map<SweepJob, JobState>;
  private readonly failures: SweepFailure[] = [];
  /** config -> seconds of its finished runs */
  private readonly durations = new Map<string, number[]>();
  private readonly aborter = new AbortController();
  private interrupted: NodeJS.Signals | null = null;
  private running = 0;
  private counter = 0;
  onFinish: () => void = () => undefined;

  constructor(private readonly jobs: SweepJob[], private readonly opts: SweepOptions,
    private readonly resolve: (f: SweepFailure[]) => void) {
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? 2));
    this.launch = opts.launch ?? childLauncher;
    this.log = opts.log ?? ((l: string) => process.stdout.write(l + '\n'));
    // skip / resume / fresh, and the init job of each: the same decisions as a Slurm submission (plan.ts)
    const decisions = decideRuns(jobs, { force: opts.force, specOf: opts.specOf, log: this.log });
    this.action = new Map(decisions.map((d) => [d.job, d.action]));
    this.dep = new Map(decisions.map((d) => [d.job, d.init]));
    this.state = new Map(jobs.map((j) => [j, this.action.get(j) === 'skip' ? 'ok' : 'pending']));
  }

  private tag(n: number, j: SweepJob): string {
    return `[${String(n).padStart(String(this.jobs.length).length)}/${this.jobs.length}] ${j.config} seed ${j.seed}`;
  }

  /**
   * Configs differ by orders of magnitude (an evaluation takes a minute, an RL run most of an hour): a job is
   * estimated by its own config's finished runs, else by the slowest config seen so far.
   */
  private eta(): string {
    if (!this.durations.size) return '';
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const slowest = Math.max(...Array.from(this.durations.values(), mean));
    // this one included
    const left = this.jobs.filter((j) => this.state.get(j) === 'pending' || this.state.get(j) === 'running');
    const total = left.reduce((a, j) => a + (this.durations.has(j.config) ?
      mean(this.durations.get(j.config)!) : slowest), 0);
    return left.length ? ` | ${left.length} left, eta ${formatDuration(total / this.concurrency)}` : '';
  }

  /** `showLog`: print the tail of run.log (only for a run that this sweep started and that failed on its own). */
  private fail(j: SweepJob, n: number, code: number | null, reason: string,
    opts: { showLog?: boolean; interrupted?: boolean } = {}): void {
    const logFile = path.join(j.out, 'run.log');
    this.state.set(j, 'failed');
    const f: SweepFailure = { job: j, code, reason, logTail: tail(logFile),
      ...(opts.interrupted ? { interrupted: true } : {}) };
    this.failures.push(f);
    this.log(`${this.tag(n, j)} FAILED: ${reason}${this.eta()}`);
    if (opts.showLog) this.log(`  last lines of ` +
      `${logFile}:\n${f.logTail.split('\n').map((l) => '    ' + l).join('\n')}`);
  }

  interrupt(sig: NodeJS.Signals): void {
    if (this.interrupted) return;
    this.interrupted = sig;
    this.log(`interrupted (${sig}): stopping ${this.running} running run(s) and waiting for them; a rerun resumes ` +
      `them`);
    this.aborter.abort();
    if (this.running === 0) this.pump();
  }

  /** Start one job: refused when its init run failed or its folder is locked, else launched as a child. */
  private start(j: SweepJob): void {
    const n = ++this.counter;
    const d = this.dep.get(j);
    if (d && this.state.get(d) === 'failed') return this.fail(j, n, null,
      `its init run ${d.config} seed ${d.seed} failed`);
    const holder = lockHolder(j.out);
    if (holder) return this.fail(j, n, null, `${j.out} is in use by process ${holder.pid} (since ${holder.started})`);
    fs.mkdirSync(j.out, { recursive: true });
    const resume = this.action.get(j) === 'resume';
    const args = runArgs(j, resume ? 'resume' : 'fresh', this.opts.extraArgs ?? []);
    const logFile = path.join(j.out, 'run.log');
    if (!resume) fs.writeFileSync(logFile, ''); // a resumed run appends to the log of the killed one
    this.state.set(j, 'running');
    this.running++;
    this.log(`${this.tag(n, j)} started${resume ? ' (resuming)' : ''}: log ${logFile}`);
    const t0 = Date.now();
    this.launch(j, args, logFile, this.aborter.signal)
      .then((code) => ({ code, err: null as Error | null }), (err: Error) => ({ code: null, err }))
      .then(({ code, err }) => {
        this.running--;
        this.settle(j, n, code, err, (Date.now() - t0) / 1000);
        this.pump();
      });
  }

  /** A launched run ended: finished (its summary.json is there), failed on its own, or stopped by an interruption. */
  private settle(j: SweepJob, n: number, code: number | null, err: Error | null, secs: number): void {
    const why = unfinishedReason(j.out);
    if (err) return this.fail(j, n, null, `could not start: ${err.message}`, { showLog: true });
    if (this.interrupted && (code !== 0 || why !== null)) {
      return this.fail(j, n, code, `stopped: interrupted by ${this.interrupted}`, { interrupted: true });
    }
    if (code !== 0) return this.fail(j, n, code, `exited with code ${code}`, { showLog: true });
    if (why !== null) return this.fail(j, n, code, `exited 0 but left no finished run: ${why}`, { showLog: true });
    this.state.set(j, 'ok');
    this.durations.set(j.config, [...(this.durations.get(j.config) ?? []), secs]);
    const id = idMean(j.out);
    this.log(`${this.tag(n, j)} done in ` +
      `${formatDuration(secs)}${id === null ? '' : `: ID ${id.toFixed(3)}`}${this.eta()}`);
  }

  /**
   * Start every job that is ready, in list order; finish when nothing runs and nothing can start. A failed job
   * settles at once and may free a job listed before it: sweep again until nothing moves.
   */
  pump(): void {
    let moved = true;
    while (!this.interrupted && moved && this.running < this.concurrency) {
      moved = false;
      for (const j of this.jobs) {
        if (this.running >= this.concurrency || this.interrupted) break;
        if (this.state.get(j) !== 'pending') continue;
        const d = this.dep.get(j);
        if (d && (this.state.get(d) === 'pending' || this.state.get(d) === 'running')) continue;
        this.start(j);
        moved = true;
      }
    }
    if (this.running > 0) return;
    for (const j of this.jobs) {
      if (this.state.get(j) !== 'pending') continue;
      // interrupted: never started; otherwise it waits on a job that can never finish (a dependency cycle)
      if (this.interrupted) this.fail(j, ++this.counter, null, `not started: interrupted by ${this.interrupted}`,
        { interrupted: true });
      else this.fail(j, ++this.counter, null, 'dependency cycle');
    }
    this.onFinish();
    this.resolve(this.failures);
  }
}
