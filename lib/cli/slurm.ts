/**
 * The Slurm options of `toolrl reproduce` (--slurm, --slurm-status and what a cluster user sets) and what
 * they do: plan the runs still to do by the local sweep's rules, write one sbatch job array per dependency
 * level and a report job, submit them (or print them with --dry-run), and read back which tasks failed.
 */
import * as path from 'path';
import { OptionSpec, ParsedArgs, UsageError } from './args';
import { Preset } from '../experiments/registry/presets';
import { SweepJob, childPath, decideRuns } from '../experiments/sweep/plan';
import { DIRECTIVE_FORM, SLURM_TIME, SlurmConfig, planSlurm, sbatchDirective } from '../experiments/slurm/scripts';
import { SlurmCommand, formatStatus, readQueue, readSubmission, sbatchArgs, slurmCommand, submissionActive,
  submissionFile,
  submissionStatus, submitPlan, waitFor } from '../experiments/slurm/queue';
import { lockHolder } from '../util/lock';

export const SLURM_OPTIONS: Record<string, OptionSpec> = {
  slurm: { kind: 'flag',
    help: 'submit the runs to Slurm: one job array per dependency level, then a report job (docs/slurm.md)' },
  'slurm-status': { kind: 'flag',
    help: 'list the tasks of the last --slurm submission: finished, running, queued, failed (with logs)' },
  'dry-run': { kind: 'flag', help: 'with --slurm: print the sbatch scripts and commands, submit nothing' },
  wait: { kind: 'flag', help: 'with --slurm: wait until every job has ended, then list the failed tasks' },
  partition: { kind: 'string', help: 'with --slurm: sbatch --partition' },
  time: { kind: 'string', help: 'with --slurm: sbatch --time of each run, e.g. 2:00:00' },
  'cpus-per-task': { kind: 'number', help: 'with --slurm: sbatch --cpus-per-task', default: 1 },
  'max-concurrent': { kind: 'number',
    help: 'with --slurm: at most this many tasks of one array at once (--array=...%K)' },
  'sbatch-line': { kind: 'list', dashValue: true,
    help: 'with --slurm: a Slurm directive, "#SBATCH --account=lab" or --account=lab (repeatable; no shell lines)' },
};

/** Seconds between two looks at the queue under --wait. */
const POLL_SECONDS = 5;

/** The checks of the Slurm options that need no Slurm: UsageError (exit 2) before anything is touched. */
export function checkSlurmArgs(args: ParsedArgs): void {
  const given = (k: string) => (k === 'sbatch-line' ? (args[k] as string[]).length > 0 : k === 'cpus-per-task' ?
    args[k] !== 1 : Boolean(args[k]));
  if (args.slurm &&
    args['slurm-status']) throw new UsageError('--slurm submits, --slurm-status reads the last submission: give one');
  for (const k of ['dry-run', 'wait', 'partition', 'time', 'cpus-per-task', 'max-concurrent', 'sbatch-line']) {
    if (given(k) && !args.slurm) throw new UsageError(`--${k} needs --slurm`);
  }
  if (args['dry-run'] && args.wait) throw new UsageError('--dry-run submits nothing to --wait for');
  const cpus = args['cpus-per-task'] as number;
  if (!Number.isInteger(cpus) || cpus < 1) throw new UsageError(`--cpus-per-task must be an integer >= 1, got ${cpus}`);
  const k = args['max-concurrent'];
  if (k !== undefined &&
    (!Number.isInteger(k) ||
    (k as number) < 1)) throw new UsageError(`--max-concurrent must be an integer >= 1, got ${k}`);
  if (args.time !== undefined && !SLURM_TIME.test(args.time as string)) {
    throw new UsageError(`--time "${args.time}" is not in Slurm's format (minutes, HH:MM:SS, D-HH:MM..., e.g. ` +
      `2:00:00)`);
  }
  if (args.partition !== undefined && !/^[A-Za-z0-9_.,-]+$/.test(args.partition as string)) {
    throw new UsageError(`--partition "${args.partition}" is not a partition name (letters, digits, _ . , -)`);
  }
  for (const l of args['sbatch-line'] as string[]) checkDirective(l);
  if (args.slurm) checkSlurmRoot(args.results as string);
}

/** One --sbatch-line: a directive, or a refusal naming the flag and the form (shell set-up has its own place). */
function checkDirective(line: string): void {
  const d = sbatchDirective(line);
  if (!('error' in d)) return;
  // a shell command is the likely mistake (the old meaning of the flag): say where set-up goes instead
  const shell = d.error === 'is not one' ? '; shell set-up such as "module load" belongs in the environment sbatch ' +
    'passes on or in a TOOLRL_NODE wrapper (docs/slurm.md)' : '';
  throw new UsageError(`--sbatch-line takes ${DIRECTIVE_FORM}; ${JSON.stringify(line)} ${d.error}${shell}`);
}

/** A results root sbatch can name in --output: a backslash would turn off its %A_%a (docs/slurm.md). */
function checkSlurmRoot(root: string): void {
  if (!path.resolve(root).includes('\\')) return;
  throw new UsageError(`--results ${root}: a path with a backslash cannot hold the Slurm logs (no %A_%a expanded)`);
}

/** Folder of a store's scripts, submission record and Slurm logs. */
export const slurmDir = (root: string, preset: Preset) => path.join(root, preset.store, 'slurm');

/**
 * `--preset P --regime R --results ROOT`: how the report job names the study (paths as a run from the repository root
 * sees them).
 */
function studyArgs(preset: Preset, root: string): string[] {
  return ['--preset', preset.name, '--regime', preset.regime.name, '--results', childPath(root)];
}

export interface SlurmContext {
  preset: Preset;
  root: string;
  jobs: SweepJob[];
  force: boolean;
  /** `toolrl run` arguments every run gets (--backend). */
  runArgs: string[];
  /** The report job's --out and --no-png. */
  reportExtra: string[];
  run?: SlurmCommand;
  log?: (line: string) => void;
}

/** `reproduce --slurm-status`: print the last submission's tasks; throws (exit 1) listing those that failed. */
export function slurmStatus(preset: Preset, root: string, run: SlurmCommand = slurmCommand, log = stdout): void {
  const dir = slurmDir(root, preset);
  const sub = readSubmission(dir);
  if (!sub) throw new Error(`no Slurm submission recorded for ${preset.store} (${submissionFile(dir)} is missing): ` +
    `submit with --slurm`);
  const tasks = submissionStatus(sub, readQueue(run));
  for (const l of formatStatus(sub, tasks)) log(l);
  const failed = tasks.filter((t) => t.status === 'failed');
  if (failed.length) {
    throw new Error(`${failed.length} Slurm task(s) failed: ` +
      `${failed.map((t) => `${t.config} seed ${t.seed} (log ${t.runLog})`).join(', ')}; ` +
      'rerun the same --slurm command to run them again (finished runs are skipped, killed ones resume where they ' +
        'can)');
  }
}

/** `reproduce --slurm`: plan, write and submit (or print with --dry-run); with --wait, wait and report failures. */
export async function slurmReproduce(args: ParsedArgs, ctx: SlurmContext): Promise<void> {
  const log = ctx.log ?? stdout;
  const run = ctx.run ?? slurmCommand;
  const dir = slurmDir(ctx.root, ctx.preset);
  const dry = Boolean(args['dry-run']);
  const previous = dry ? null : readSubmission(dir);
  if (previous) {
    // two submissions writing the same run folders would fight over them: the first must have ended
    const queue = readQueue(run);
    if (submissionActive(previous, queue)) {
      throw new Error(`the last submission (job(s) ` +
        `${previous.arrays.map((a) => a.jobId).concat(previous.report ? [previous.report.jobId] : []).join(', ')}) ` +
        'is still queued or running: wait for it (--slurm-status) or scancel it, then submit again');
    }
    formatStatus(previous, submissionStatus(previous, queue)).forEach((l, i) => log(i === 0 ? `previous ${l}` : l));
  }
  const decisions = decideRuns(ctx.jobs, { force: ctx.force, log });
  const locked = decisions.filter((d) => d.action !== 'skip').map((d) =>
    ({ d, holder: lockHolder(d.job.out) })).filter((x) => x.holder);
  if (locked.length) {
    throw new Error(`run folder(s) in use by a live process here: ` +
      `${locked.map((x) => `${x.d.job.out} (pid ${x.holder!.pid})`).join(', ')}; ` +
      'wait for them or stop them, then submit again');
  }
  const cfg: SlurmConfig = {
    dir, name: `toolrl-${ctx.preset.store}`,
    partition: args.partition as string | undefined, time: args.time as string | undefined,
    cpusPerTask: args['cpus-per-task'] as number, maxConcurrent: args['max-concurrent'] as number | undefined,
    extraLines: args['sbatch-line'] as string[], runArgs: ctx.runArgs,
    reportArgs: [...studyArgs(ctx.preset, ctx.root), ...ctx.reportExtra], statusArgs: studyArgs(ctx.preset, ctx.root),
  };
  const plan = planSlurm(decisions, cfg);
  const runs = plan.arrays.reduce((a, x) => a + x.tasks.length, 0);
  log(`slurm: ${runs} run(s) to submit in ${plan.arrays.length} job array(s) ` +
    `(${plan.arrays.map((a) => `level ${a.level}: ${a.tasks.length}`).join(', ') || 'none'}), ` +
    `then the report job; ${plan.skipped.length} finished run(s) skipped`);
  if (dry) {
    const ids = plan.arrays.map((a) => `<job id of level ${a.level}>`);
    for (const a of plan.arrays) log(`\n==> ${a.file}: sbatch ` +
      `${sbatchArgs(plan, a.level, ids).join(' ')}\n${a.script}`);
    log(`\n==> ${plan.report.file}: sbatch ${sbatchArgs(plan, 'report', ids).join(' ')}\n${plan.report.script}`);
    log('dry run: nothing written, nothing submitted');
    return;
  }
  const sub = submitPlan(plan, dir, run);
  for (const a of sub.arrays) log(`submitted level ${a.level}: job array ${a.jobId} (${a.tasks.length} task(s), ` +
    `script ${a.file})`);
  log(`submitted the report job ${sub.report!.jobId}; logs under ${path.join(dir, 'logs')}; ` +
    `\`npx toolrl reproduce --slurm-status ${studyArgs(ctx.preset, ctx.root).join(' ')}\` lists what failed`);
  if (!args.wait) return;
  await waitFor(sub, { seconds: POLL_SECONDS, run, onChange: (l) => log(l) });
  slurmStatus(ctx.preset, ctx.root, run, log);
}

function stdout(line: string): void {
  process.stdout.write(line + '\n');
}
