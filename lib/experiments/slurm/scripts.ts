/**
 * The study as Slurm job arrays: the sbatch scripts of `toolrl reproduce --slurm` (slurm_queue.ts submits
 * them and reads the queue back).
 *
 * The runs still to do (plan.ts, decideRuns: the same rule as the local sweep) are grouped by dependency
 * level: level 0 holds the runs that start from a checkpoint already there (the base, or a finished init),
 * level k + 1 the runs whose init run is in level k (fcl-sft in level 0, fcl-sft-rl in level 1). Each level
 * is one job array, one array task per (config, seed), submitted with `--dependency=afterok:<level k>` so it
 * starts once every run it may start from has finished; a report job (afterany: it runs even after a
 * failure, as the local `reproduce` reports a partial study) lists what failed and rebuilds the report.
 *
 * An array task runs the very `toolrl run` command line the local sweep starts (runArgs), from the
 * repository root, into the shared results store, its output in the run folder's run.log as locally. So a
 * task killed mid-run (scancel, a node failure, the time limit) leaves what a killed local run leaves, and
 * the next submission skips, resumes or restarts it by the store's rules.
 */
import * as path from 'path';
import { REPO_ROOT, RunAction, RunDecision, SweepJob, childPath, runArgs } from '../sweep/plan';

export interface SlurmConfig {
  /**
   * Folder of the scripts, the submission record and the logs: <results>/<store>/slurm (made absolute: sbatch reads
   * --output from the job's folder).
   */
  dir: string;
  /** Prefix of the job names: toolrl-<store>. */
  name: string;
  /** sbatch --partition (default: the cluster's default partition). */
  partition?: string;
  /** sbatch --time of every job, in Slurm's format (minutes, HH:MM:SS, D-HH:MM...). */
  time?: string;
  /** sbatch --cpus-per-task (default 1: a wasm run uses one core; the tensorflow backend can use more). */
  cpusPerTask?: number;
  /** The `%K` of --array: at most this many tasks of one array at once. */
  maxConcurrent?: number;
  /** Extra Slurm directives for every script: `#SBATCH --account=lab` or `--account=lab` (sbatchDirective). */
  extraLines?: string[];
  /** Extra `toolrl run` arguments (e.g. --backend wasm). */
  runArgs?: string[];
  /**
   * Arguments of the report job's `toolrl report` and `toolrl reproduce --slurm-status` (preset, regime, results, out).
   */
  reportArgs: string[];
  statusArgs: string[];
  /** The node binary and repository root the tasks use (default: this process's). */
  node?: string;
  repoRoot?: string;
}

export interface SlurmTask {
  /** SLURM_ARRAY_TASK_ID. */
  index: number;
  job: SweepJob;
  action: Exclude<RunAction, 'skip'>;
  /** The `toolrl run` arguments. */
  args: string[];
}

export interface SlurmArray {
  level: number;
  tasks: SlurmTask[];
  /** Where the script goes, and its text. */
  file: string;
  script: string;
}

export interface SlurmPlan {
  arrays: SlurmArray[];
  report: { file: string; script: string };
  /** Runs that are finished (not submitted). */
  skipped: SweepJob[];
}

/** A word as the shell reads it back unchanged: bare when it is plainly safe, else single-quoted. */
export function shq(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Slurm's --time formats: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS. */
export const SLURM_TIME = /^(\d+(:\d{1,2}){0,2}|\d+-\d{1,2}(:\d{1,2}){0,2})$/;

/** How --sbatch-line is written: what its refusal names. */
export const DIRECTIVE_FORM = 'a Slurm directive, written "#SBATCH --account=lab" or "--account=lab"';

/** Directives the scripts set themselves: --slurm-status reads the logs at --output, each task is its --array index. */
const OWN_DIRECTIVES = ['--array', '--output'];

/**
 * An extra line as the #SBATCH directive it is (`#SBATCH ` added to a bare `--option`), or why it is not one.
 * Shell lines are refused, not run: run before the script's own set-up they failed quietly ("command not found"
 * in a log nobody reads), and set-up belongs in the environment sbatch passes on or a TOOLRL_NODE wrapper.
 */
export function sbatchDirective(line: string): { directive: string } | { error: string } {
  if (/[\r\n]/.test(line)) return { error: 'holds a line break' };
  const bare = line.trim().replace(/^#SBATCH[ \t]+/, '');
  if (!/^--[A-Za-z]/.test(bare)) return { error: 'is not one' };
  const option = bare.split(/[=\s]/)[0];
  if (OWN_DIRECTIVES.includes(option)) return { error: `sets ${option}, which the scripts set themselves` };
  return { directive: `#SBATCH ${bare}` };
}

/**
 * `p` as a literal in an sbatch file name: sbatch expands %x, %j, %A, %a ... in --output and reads %% as one %,
 * so a results path holding a % would otherwise send the logs elsewhere. A backslash would turn every
 * expansion off (the deliberate %A_%a too): refused where the plan is made.
 */
export const slurmLiteral = (p: string): string => p.replace(/%/g, '%%');

/** The log file of an array task (sbatch --output with %A and %a filled in). */
export function taskLog(dir: string, level: number, jobId: string, index: number): string {
  return path.join(dir, 'logs', `level-${level}-${jobId}_${index}.out`);
}

export function reportLog(dir: string, jobId: string): string {
  return path.join(dir, 'logs', `report-${jobId}.out`);
}

/**
 * The dependency level of every run to do: 0 when its init is not among them (a base, or a finished
 * run), else one more than its init's. decideRuns lists inits before their dependents.
 */
export function levels(decisions: RunDecision[]): Map<SweepJob, number> {
  const todo = new Set(decisions.filter((d) => d.action !== 'skip').map((d) => d.job));
  const level = new Map<SweepJob, number>();
  for (const d of decisions) {
    if (!todo.has(d.job)) continue;
    const init = d.init && todo.has(d.init) ? level.get(d.init) : undefined;
    if (d.init && todo.has(d.init) &&
      init === undefined) throw new Error(`${d.job.config} seed ${d.job.seed} is listed before its init run ` +
      `${d.init.config}`);
    level.set(d.job, init === undefined ? 0 : init + 1);
  }
  return level;
}

/**
 * The directives and set-up every script shares, the user's directives last. `output` is an sbatch file name
 * pattern: its literal parts went through slurmLiteral.
 */
function header(cfg: SlurmConfig, jobName: string, output: string,
  array?: string): { directives: string[]; setup: string[] } {
  const directives = [
    `#SBATCH --job-name=${shq(jobName)}`,
    ...(array ? [`#SBATCH --array=${array}`] : []),
    `#SBATCH --cpus-per-task=${cfg.cpusPerTask ?? 1}`,
    ...(cfg.partition ? [`#SBATCH --partition=${shq(cfg.partition)}`] : []),
    ...(cfg.time ? [`#SBATCH --time=${cfg.time}`] : []),
    `#SBATCH --output=${shq(output)}`,
    ...(cfg.extraLines ?? []),
  ];
  const setup = [
    `cd ${shq(cfg.repoRoot ?? REPO_ROOT)}`,
    '# no parent to watch: the submitting process is gone by the time this runs (commands.ts, parentWatch)',
    'unset TOOLRL_PARENT_PID',
    '# the node that submitted, unless TOOLRL_NODE names another (e.g. TOOLRL_NODE=node after a module load)',
    `node=\${TOOLRL_NODE:-${shq(cfg.node ?? process.execPath)}}`,
  ];
  return { directives, setup };
}

function arrayScript(cfg: SlurmConfig, level: number, tasks: SlurmTask[]): string {
  const throttle = cfg.maxConcurrent ? `%${cfg.maxConcurrent}` : '';
  const log = path.join(slurmLiteral(cfg.dir), 'logs', `level-${level}-%A_%a.out`);
  const { directives, setup } = header(cfg, `${cfg.name}-L${level}`, log, `0-${tasks.length - 1}${throttle}`);
  const cases =
    tasks.map((t) => `  ${t.index}) out=${shq(childPath(t.job.out))}; fresh=${t.action === 'fresh' ? 1 : 0}; ` +
    `args=(${t.args.map(shq).join(' ')}) ;;  # ${t.job.config} seed ` +
      `${t.job.seed}${t.action === 'resume' ? ', resuming' : ''}`);
  return [
    '#!/bin/bash',
    `# toolrl reproduce --slurm: level ${level} of the study, ${tasks.length} run(s), one array task each.`,
    '# Each task runs the same `toolrl run` as a local `toolrl reproduce`, its output in the run folder\'s run.log.',
    ...directives,
    'set -euo pipefail',
    ...setup,
    'case "${SLURM_ARRAY_TASK_ID:-}" in',
    ...cases,
    '  *) echo "toolrl: no run for array task \'${SLURM_ARRAY_TASK_ID:-}\' in this script" >&2; exit 2 ;;',
    'esac',
    'mkdir -p "$out"',
    '# a fresh start begins a new run.log; a resumed run appends to the log of the killed one (as locally)',
    'if [ "$fresh" = 1 ]; then : > "$out/run.log"; fi',
    'echo "$(date -u +%FT%TZ) task $SLURM_ARRAY_TASK_ID on $(hostname): toolrl ${args[*]} (log $out/run.log)"',
    `exec "$node" --import tsx lib/cli/main.ts "\${args[@]}" >> "$out/run.log" 2>&1`,
    '',
  ].join('\n');
}

function reportScript(cfg: SlurmConfig): string {
  const log = path.join(slurmLiteral(cfg.dir), 'logs', 'report-%j.out');
  const { directives, setup } = header(cfg, `${cfg.name}-report`, log);
  const toolrl = (args: string[]) => `"$node" --import tsx lib/cli/main.ts ${args.map(shq).join(' ')}`;
  return [
    '#!/bin/bash',
    '# toolrl reproduce --slurm: after every array, list the runs that failed (with their logs) and rebuild the ' +
      'report.',
    ...directives,
    'set -uo pipefail',
    ...setup,
    `${toolrl(['reproduce', '--slurm-status', ...cfg.statusArgs])}`,
    'status=$?',
    `${toolrl(['report', ...cfg.reportArgs])} || exit $?`,
    '# failed runs fail this job too, so squeue / sacct show it',
    'exit $status',
    '',
  ].join('\n');
}

/** The scripts of a study: one array per dependency level of the runs to do, then the report job. */
export function planSlurm(decisions: RunDecision[], config: SlurmConfig): SlurmPlan {
  const cfg = { ...config, dir: path.resolve(config.dir) };
  if (cfg.maxConcurrent !== undefined && !(Number.isInteger(cfg.maxConcurrent) && cfg.maxConcurrent >= 1)) {
    throw new Error(`maxConcurrent must be an integer >= 1, got ${cfg.maxConcurrent}`);
  }
  if (cfg.time !== undefined &&
    !SLURM_TIME.test(cfg.time)) throw new Error(`time "${cfg.time}" is not in Slurm's format (e.g. 90, 4:00:00, ` +
    `1-12:00)`);
  if (cfg.dir.includes('\\')) throw new Error(`the Slurm folder ${cfg.dir} holds a backslash: sbatch expands no %A_%a`);
  cfg.extraLines = (cfg.extraLines ?? []).map((l) => {
    const d = sbatchDirective(l);
    if ('error' in d) throw new Error(`extra sbatch line ${JSON.stringify(l)} ${d.error}: give ${DIRECTIVE_FORM}`);
    return d.directive;
  });
  const level = levels(decisions);
  const byLevel: SlurmTask[][] = [];
  for (const d of decisions) {
    if (d.action === 'skip') continue;
    const l = level.get(d.job)!;
    const tasks = (byLevel[l] = byLevel[l] ?? []);
    tasks.push({ index: tasks.length, job: d.job, action: d.action,
      args: runArgs(d.job, d.action, cfg.runArgs ?? []) });
  }
  return {
    arrays: byLevel.map((tasks, l) => ({ level: l, tasks, file: path.join(cfg.dir, `level-${l}.sbatch`),
      script: arrayScript(cfg, l, tasks) })),
    report: { file: path.join(cfg.dir, 'report.sbatch'), script: reportScript(cfg) },
    skipped: decisions.filter((d) => d.action === 'skip').map((d) => d.job),
  };
}
