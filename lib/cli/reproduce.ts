/**
 * `toolrl reproduce` and `toolrl report`.
 *
 * reproduce = run what is missing, then report: plan every experiment of the registry x the preset's seeds
 * (lib/experiments/sweep/local.ts), run the jobs whose summary.json is absent as child processes, rebuild the
 * report from the results store, and print Table 1, Table 2 (and the LR sweep). With every result present
 * it only rebuilds the report, so it is also the command that refreshes the report after a rerun.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Command, UsageError, parseSeed } from './args';
import { EXIT_HELP } from '../util/errors';
import { PRESETS, Preset, getPreset } from '../experiments/registry/presets';
import { DEFAULT_RESULTS_ROOT, isDefaultResultsRoot } from '../experiments/store/folder';
import { DEFAULT_REGIME, REGIMES } from '../experiments/registry/regimes';
import type { BuiltReport } from '../report/build';
import type { ReportTable } from '../report/tables/base';
import { childPath } from '../experiments/sweep/plan';
import { shq } from '../experiments/slurm/scripts';
import { SLURM_OPTIONS, checkSlurmArgs, slurmReproduce, slurmStatus } from './slurm';

// The report modules load danfojs (and with it TensorFlow.js, ~3 s): import them only when a command
// needs them, so that every other `toolrl` command (and each child run of a sweep) starts fast.
const loadBuild = () => import('../report/build');
const loadSweep = () => import('../experiments/sweep/local');

function reportDir(args: Record<string, unknown>, preset: string, root: string): string {
  return (args.out as string | undefined) ?? path.join(root, preset, 'report');
}

/** The command that fills `preset`'s store, as the user would type it: with the --results they gave. */
function reproduceHint(preset: Preset, root: string): string {
  const regime = preset.regime.name === DEFAULT_REGIME ? '' : ` --regime ${preset.regime.name}`;
  const results = isDefaultResultsRoot(root) ? '' : ` --results ${shq(root)}`;
  return `npx toolrl reproduce --preset ${preset.name}${regime}${results}`;
}

/**
 * Throw when the store holds no finished run (a <config>/seed-<n>/summary.json, as the report counts them),
 * naming the command that makes one; the report's own message cannot know the --results it was given.
 */
function requireFinishedRun(preset: Preset, root: string): void {
  const store = path.join(root, preset.store);
  const folders = (d: string) => fs.readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory())
    .map((e) => path.join(d, e.name));
  const finished = (config: string) => folders(config).some((seed) => fs.existsSync(path.join(seed, 'summary.json')));
  if (fs.existsSync(store) && folders(store).some(finished)) return;
  throw new Error(`no finished runs under ${store} (no <config>/seed-<n>/summary.json): ` +
    `\`${reproduceHint(preset, root)}\` makes them`);
}

/**
 * The tables the terminal shows: Table 1, Table 2, and the LR sweep and capability probe when they have rows;
 * then the run folders left out as unfinished (report.html lists them too: the terminal must not drop them silently).
 */
async function printTables(built: BuiltReport, out: string, storeDir: string): Promise<void> {
  const { toText } = await import('../report/render/tables');
  for (const id of ['table1-id', 'table2-ood', 'table-lr', 'table-capability']) {
    const t = built.tables.find((x: ReportTable) => x.id === id);
    if (t) process.stdout.write('\n' + toText(t) + '\n');
  }
  const left = built.store.incomplete;
  if (left.length) {
    process.stdout.write(`\nnot finished, left out of the report: ${left.length} run folder(s) under ${storeDir}: ` +
      `${left.join(', ')}\n`);
  }
  process.stdout.write(`\nreport: ${path.join(out, 'report.html')} (tables as CSV/Markdown under ` +
    `${path.join(out, 'tables')})\n`);
}

const common = {
  preset: { kind: 'string' as const, choices: PRESETS, help: 'size preset', default: 'quick' },
  regime: { kind: 'string' as const, choices: REGIMES,
    help: 'which base the study starts from (lib/experiments/registry/regimes.ts)', default: DEFAULT_REGIME },
  out: { kind: 'string' as const,
    help: 'report folder (default data/results/<store>/report; store: the preset, -instruct in that regime)' },
  results: { kind: 'string' as const, help: 'results store root', default: DEFAULT_RESULTS_ROOT },
  'no-png': { kind: 'flag' as const, help: 'skip the PNG figures (headless Chromium)' },
};

export const reproduceCommand: Command = {
  spec: {
    name: 'reproduce',
    summary: 'run the missing experiments of the study (all seeds), then build and print the report',
    notes: 'A run folder with files the tool did not write keeps them: --force removes only the entries a run writes ' +
      '(toolrl run --help); a folder with such files and no run.json fails its job (exit 5) untouched.\n' + EXIT_HELP,
    options: {
      ...common,
      only: { kind: 'string', help: 'comma-separated configs (plus what they start from), e.g. vanilla-rl,ets' },
      seeds: { kind: 'string', help: 'comma-separated seeds in [0, 4294967295] (default: the preset\'s), e.g. 1' },
      force: { kind: 'flag', help: 're-run finished jobs too (their folders are cleared first)' },
      jobs: { kind: 'number', help: 'runs at once (one per core)', default: 2 },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'],
        help: 'tfjs backend of the runs (default: automatic)' },
      ...SLURM_OPTIONS,
    },
  },
  async run(args) {
    const preset = getPreset(args.preset as string, args.regime as string);
    const root = args.results as string;
    checkSlurmArgs(args);
    if (args['slurm-status']) return slurmStatus(preset, root);
    const jobsN = args.jobs as number;
    if (!Number.isInteger(jobsN) || jobsN < 1) throw new UsageError(`--jobs must be an integer >= 1, got ${jobsN}`);
    const only = args.only === undefined ? undefined : String(args.only).split(',').map((s) =>
      s.trim()).filter(Boolean);
    const seeds = args.seeds === undefined ? undefined : String(args.seeds).split(',').map((x) =>
      parseSeed('--seeds', x.trim()));
    const [{ runSweep }, { planJobs }] = await Promise.all([loadSweep(), import('../experiments/sweep/plan')]);
    let jobs;
    try {
      jobs = planJobs(preset, { only, seeds, root });
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    process.stdout.write(`reproduce: preset ${preset.name}, regime ${preset.regime.name}, ${jobs.length} run(s) ` +
      `(${new Set(jobs.map((j) => j.config)).size} config(s) x ` +
      `seeds ${(seeds ?? preset.seeds).join(', ')}), ${args.slurm ? 'as Slurm job arrays' : `${jobsN} at once`}, ` +
        `results under ${path.join(root, preset.store)}\n`);
    const extraArgs = args.backend ? ['--backend', args.backend as string] : [];
    if (args.slurm) {
      const reportExtra = [...(args.out ? ['--out', childPath(args.out as string)] : []),
        ...(args['no-png'] ? ['--no-png'] : [])];
      return slurmReproduce(args, { preset, root, jobs, force: Boolean(args.force), runArgs: extraArgs, reportExtra });
    }
    const failures = await runSweep(jobs, { concurrency: jobsN, force: Boolean(args.force), extraArgs });
    const stopped = failures.filter((f) => f.interrupted);
    if (stopped.length) {
      // no report from a study cut off on purpose: the rerun that resumes it will build one
      throw new Error(`interrupted: ${stopped.length} run(s) stopped or not started; rerun the same command to ` +
        `resume them`);
    }
    const out = reportDir(args, preset.store, root);
    // a partial study still gets a report: what finished is worth seeing while the failures are fixed
    const failed = failures.length ? `${failures.length} run(s) failed: ` +
      failures.map((f) =>
        `${f.job.config} seed ${f.job.seed} (${f.reason}; log ${path.join(f.job.out, 'run.log')})`).join(', ') : '';
    const { buildReport } = await loadBuild();
    let built: BuiltReport;
    try {
      requireFinishedRun(preset, root);
      built = await buildReport(preset.store, out, { root, png: !args['no-png'] });
    } catch (e) {
      // with nothing finished there is no report; the failed runs are the news, not the empty store
      throw new Error(failed ? `${failed}; no report: ${(e as Error).message}` : (e as Error).message);
    }
    await printTables(built, out, path.join(root, preset.store));
    if (failed) throw new Error(failed);
  },
};

export const reportCommand: Command = {
  spec: {
    name: 'report',
    summary: 'rebuild the report (tables, report.html, summary.json, PNGs) from the results store only',
    options: {
      ...common,
      docs: { kind: 'flag',
        help: 'the full preset in both regimes, then docs/results.md and the README\'s results block' },
    },
  },
  async run(args) {
    if (args.docs) {
      const root = args.results as string;
      const { buildReport } = await loadBuild();
      for (const r of REGIMES) {
        const p = getPreset('full', r);
        const out = path.join(root, p.store, 'report');
        if (!fs.existsSync(path.join(root,
          p.store))) { process.stdout.write(`report: no store ${path.join(root, p.store)} yet\n`); continue; }
        await buildReport(p.store, out, { root, png: !args['no-png'] });
        process.stdout.write(`report: ${path.join(out, 'report.html')}\n`);
      }
      const { writeDocs } = await import('../report/docs');
      for (const f of writeDocs('.', root)) process.stdout.write(`wrote ${f}\n`);
      return;
    }
    const preset = getPreset(args.preset as string, args.regime as string);
    const root = args.results as string;
    const out = reportDir(args, preset.store, root);
    const store = path.join(root, preset.store);
    if (!fs.existsSync(store)) {
      throw new UsageError(`--results ${root}: no results store ${store} (\`${reproduceHint(preset, root)}\` ` +
        'makes it)');
    }
    requireFinishedRun(preset, root);
    const { buildReport } = await loadBuild();
    const built = await buildReport(preset.store, out, { root, png: !args['no-png'] });
    await printTables(built, out, store);
  },
};
