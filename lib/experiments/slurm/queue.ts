/**
 * Submitting a study's scripts (slurm.ts) and reading back what became of them.
 *
 * A submission is recorded in <results>/<store>/slurm/submission.json: the job id of every array, and
 * which run each array task is. The state of a task is then read from two places: the results store (a
 * finished run is finished whatever the queue says) and `squeue` (pending or running; the state of a task
 * that ended, such as FAILED, CANCELLED or TIMEOUT, while Slurm still remembers it, MinJobAge). A task
 * that is neither finished nor in the queue failed: it is listed with its run.log and its Slurm log.
 */
import * as fs from 'fs';
import * as path from 'path';
import { spawnSync } from 'child_process';
import { writeJsonAtomic } from '../../util/atomic';
import { unfinishedReason } from '../store/folder';
import { SlurmPlan, reportLog, taskLog } from './scripts';

/**
 * Runs a Slurm client command and returns its stdout; throws naming the command and its stderr. Injectable for tests.
 */
export type SlurmCommand = (cmd: 'sbatch' | 'squeue', args: string[]) => string;

export const slurmCommand: SlurmCommand = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) {
    const missing = (r.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(missing ?
      `${cmd} not found on PATH: --slurm needs Slurm's client commands (sbatch, squeue)` : `${cmd}: ` +
      `${r.error.message}`);
  }
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with code ${r.status}: ` +
    `${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
};

export interface SubmittedTask {
  index: number;
  config: string;
  seed: number;
  out: string;
  action: 'resume' | 'fresh';
}

export interface Submission {
  submitted: string;
  dir: string;
  arrays: { level: number; jobId: string; file: string; tasks: SubmittedTask[] }[];
  report: { jobId: string; file: string } | null;
}

export const submissionFile = (dir: string) => path.join(dir, 'submission.json');

/** The last submission of a store, or null when there is none. */
export function readSubmission(dir: string): Submission | null {
  const file = submissionFile(dir);
  if (!fs.existsSync(file)) return null;
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Submission;
  } catch (e) {
    throw new Error(`${file}: not a submission record (${(e as Error).message})`);
  }
}

/** The sbatch arguments of each script; `ids` are the job ids of the arrays before (placeholders in a dry run). */
export function sbatchArgs(plan: SlurmPlan, level: number | 'report', ids: string[]): string[] {
  if (level === 'report') return ['--parsable', ...(ids.length ? [`--dependency=afterany:${ids.join(':')}`] : []),
    plan.report.file];
  // afterok on the level before: it ran only after the one before it succeeded, so one edge suffices;
  // a failed run there cancels this array (--kill-on-invalid-dep) instead of leaving it pending for ever
  return ['--parsable', ...(level > 0 ? [`--dependency=afterok:${ids[level - 1]}`, '--kill-on-invalid-dep=yes'] : []),
    plan.arrays[level].file];
}

/** `sbatch --parsable` prints "<id>" or "<id>;<cluster>". */
function jobId(out: string, file: string): string {
  const id = out.trim().split(';')[0];
  if (!/^\d+$/.test(id)) throw new Error(`sbatch ${file}: expected a job id, got ${JSON.stringify(out.trim())}`);
  return id;
}

/**
 * Write the scripts, submit them in level order and record the submission. If an sbatch fails, the
 * record keeps what was submitted before it (those jobs run; the error says so).
 */
export function submitPlan(plan: SlurmPlan, dir: string, run: SlurmCommand = slurmCommand): Submission {
  dir = path.resolve(dir);
  fs.mkdirSync(path.join(dir, 'logs'), { recursive: true });
  for (const s of [...plan.arrays, plan.report]) fs.writeFileSync(s.file, s.script, { mode: 0o755 });
  const sub: Submission = { submitted: new Date().toISOString(), dir, arrays: [], report: null };
  const record = () => writeJsonAtomic(submissionFile(dir), sub);
  const ids: string[] = [];
  const submit = (level: number | 'report', file: string) => {
    try {
      return jobId(run('sbatch', sbatchArgs(plan, level, ids)), file);
    } catch (e) {
      record();
      const done = ids.length ?
        `; submitted before it: job(s) ${ids.join(', ')} (recorded in ${submissionFile(dir)})` : '';
      throw new Error(`${(e as Error).message}${done}`);
    }
  };
  for (const a of plan.arrays) {
    const id = submit(a.level, a.file);
    ids.push(id);
    sub.arrays.push({ level: a.level, jobId: id, file: a.file,
      tasks: a.tasks.map((t) => ({ index: t.index, config: t.job.config, seed: t.job.seed,
        out: path.resolve(t.job.out), action: t.action })) });
  }
  sub.report = { jobId: submit('report', plan.report.file), file: plan.report.file };
  record();
  return sub;
}

/** A job or array task in the queue: "<id>" or "<array id>_<task>" -> its state and reason. */
export type Queue = Map<string, { state: string; reason: string }>;

/** This user's jobs, every array task on its own line, those that ended too while Slurm remembers them. */
export function readQueue(run: SlurmCommand = slurmCommand): Queue {
  const out = run('squeue', ['-h', '-r', '--me', '-t', 'all', '-o', '%F|%K|%T|%r']);
  const q: Queue = new Map();
  for (const line of out.split('\n')) {
    const [array, task, state, reason] = line.trim().split('|');
    if (!array || !state) continue;
    q.set(/^\d+$/.test(task ?? '') ? `${array}_${task}` : array, { state, reason: reason ?? '' });
  }
  return q;
}

/** States of a job that has not ended (squeue's long names). */
const ACTIVE = new Set(['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'REQUEUE_HOLD',
  'REQUEUE_FED',
  'RESIZING', 'SIGNALING', 'STAGE_OUT', 'STOPPED']);

export interface TaskStatus extends SubmittedTask {
  level: number;
  jobId: string;
  /** finished: its summary.json is there; queued / running: in the queue; failed: neither. */
  status: 'finished' | 'queued' | 'running' | 'failed';
  /** Slurm's state and reason when it still knows the task (e.g. CANCELLED DependencyNeverSatisfied). */
  slurm: string | null;
  runLog: string;
  slurmLog: string;
}

/** The state of every task of a submission. */
export function submissionStatus(sub: Submission, queue: Queue): TaskStatus[] {
  const out: TaskStatus[] = [];
  for (const a of sub.arrays) {
    for (const t of a.tasks) {
      const q = queue.get(`${a.jobId}_${t.index}`);
      const active = q !== undefined && ACTIVE.has(q.state);
      const status = unfinishedReason(t.out) === null ? 'finished' : active ?
        (q!.state === 'PENDING' ? 'queued' : 'running') : 'failed';
      out.push({ ...t, level: a.level, jobId: a.jobId, status,
        slurm: q ? `${q.state}${q.reason && q.reason !== 'None' ? ` ${q.reason}` : ''}` : null,
        runLog: path.join(t.out, 'run.log'), slurmLog: taskLog(sub.dir, a.level, a.jobId, t.index) });
    }
  }
  return out;
}

/** Whether any job of the submission (an array task or the report job) has not ended. */
export function submissionActive(sub: Submission, queue: Queue): boolean {
  const ids = [...sub.arrays.map((a) => a.jobId), ...(sub.report ? [sub.report.jobId] : [])];
  for (const [key, v] of queue) if (ACTIVE.has(v.state) && ids.includes(key.split('_')[0])) return true;
  return false;
}

/** The lines `--slurm-status` prints: a count, then one line per failed task with its logs. */
export function formatStatus(sub: Submission, tasks: TaskStatus[]): string[] {
  const count = (s: TaskStatus['status']) => tasks.filter((t) => t.status === s).length;
  const jobs = sub.arrays.map((a) => a.jobId).join(', ') || 'none';
  const report = sub.report ? `, report ${sub.report.jobId}` : '';
  const lines = [`slurm submission of ${sub.submitted} (job(s) ${jobs}${report}): ${tasks.length} task(s): ` +
    `${count('finished')} finished, ${count('running')} running, ${count('queued')} queued, ${count('failed')} failed`];
  for (const t of tasks.filter((x) => x.status === 'failed')) {
    const slurm = t.slurm ? `, ${t.slurm}` : '';
    lines.push(`  FAILED ${t.config} seed ${t.seed} (array ${t.jobId} task ${t.index}${slurm}): ` +
      `log ${t.runLog}, slurm log ${t.slurmLog}`);
  }
  if (sub.report) lines.push(`  report job ${sub.report.jobId}: log ${reportLog(sub.dir, sub.report.jobId)}`);
  return lines;
}

/** Poll the queue every `seconds` until no job of `sub` is pending or running; `onChange` gets each new count line. */
export async function waitFor(sub: Submission,
  opts: { seconds?: number; run?: SlurmCommand; onChange?: (line: string) => void } = {}): Promise<void> {
  let last = '';
  for (;;) {
    const queue = readQueue(opts.run);
    const line = formatStatus(sub, submissionStatus(sub, queue))[0];
    if (line !== last) opts.onChange?.(line);
    last = line;
    if (!submissionActive(sub, queue)) return;
    await new Promise((r) => setTimeout(r, (opts.seconds ?? 5) * 1000));
  }
}
