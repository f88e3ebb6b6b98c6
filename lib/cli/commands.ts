/**
 * The subcommands of `toolrl`. Each is a thin shell over lib: parse options, call the library, print.
 */
import * as path from 'path';
import { Command, UsageError, parseOverrides, positiveInt } from './args';
import { checkCheckpointArg, inputOf } from './inputs';
import { EXIT_HELP } from '../util/errors';
import { loadTokenizer } from '../format/tokenizer';
import { initBackend } from '../backend';
import { PRESETS, getPreset } from '../experiments/registry/presets';
import { DEFAULT_REGIME, REGIMES, RegimeName } from '../experiments/registry/regimes';
import { getExperiment, listExperiments } from '../experiments/registry/configs';
import { planRun, resultsDir, runExperiment, RunOptions } from '../experiments/run/runner';
import { splitSyntax } from '../experiments/run/inputs';
import { runEval, formatEval, splitTasks, EvalSplit } from './eval';
import { branchResultsDir } from '../experiments/store/branch';
import { BENCH_PARTS, BenchPart, benchMarkdown, runBench, formatBench, parseModelShape } from './bench';
import { writeDataset } from '../envs/data';
import { reproduceCommand, reportCommand } from './reproduce';
import { calibrateCommand } from './calibrate';
import { pointsCommand } from './points';

const SPLITS = ['id', 'format_ood', 'content_ood', 'format_content_ood'];

const data: Command = {
  spec: {
    name: 'data',
    summary: 'regenerate the task splits, corpus and vocabulary under data/ (deterministic)',
    options: { out: { kind: 'string', help: 'output folder', default: 'data' } },
  },
  async run(args) {
    const stats = writeDataset(args.out as string);
    process.stdout.write(JSON.stringify(stats, null, 2) + '\n');
  },
};

const evalCmd: Command = {
  spec: {
    name: 'eval',
    summary: 'greedy evaluation of a checkpoint (or the scripted teacher) on a split',
    options: {
      checkpoint: { kind: 'string', help: 'checkpoint folder (model.json + weights.bin)' },
      policy: { kind: 'string', choices: ['teacher'], help: 'a scripted policy instead of a checkpoint' },
      split: { kind: 'string', choices: SPLITS, help: 'which test set', default: 'id' },
      limit: { kind: 'number', help: 'tasks per category (default: all)' },
      constrained: { kind: 'flag',
        help: 'forbid structurally impossible tokens after <tool_call>\\n (capability probe)' },
      'json-start': { kind: 'flag', help: 'stricter probe: allow only {" right after <tool_call>\\n (JSON splits)' },
      show: { kind: 'number', help: 'also print the assistant messages of the first N episodes' },
      json: { kind: 'flag', help: 'print the result as JSON' },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    if ((args.checkpoint === undefined) === (args.policy === undefined)) {
      throw new UsageError('give exactly one of --checkpoint DIR or --policy teacher');
    }
    if (args.policy !== undefined && (args.constrained || args['json-start'])) {
      throw new UsageError('--constrained and --json-start need --checkpoint');
    }
    const limit = args.limit === undefined ? 0 : positiveInt('--limit', args.limit);
    const show = args.show === undefined ? 0 : positiveInt('--show', args.show);
    if (args['json-start'] && splitSyntax(args.split as string) === 'python') {
      throw new UsageError(`--json-start applies to JSON calls, not to ${args.split}'s python syntax`);
    }
    // every input checked before the backend starts: the split's tasks and the checkpoint's files
    inputOf('--data', () => splitTasks(args.split as EvalSplit, args.data as string));
    if (args.checkpoint !== undefined) checkCheckpointArg(args.checkpoint as string, args.data as string);
    if (args.checkpoint !== undefined) await initBackend({ backend: args.backend as string | undefined,
      verbose: !args.json });
    const res = await runEval({
      checkpoint: args.checkpoint as string | undefined,
      split: args.split as EvalSplit,
      limit,
      constrained: Boolean(args.constrained),
      jsonStart: Boolean(args['json-start']),
      dataDir: args.data as string,
      progress: true,
      show,
    });
    process.stdout.write(args.json ? JSON.stringify(res, null, 2) + '\n' : formatEval(res) + '\n');
  },
};

const bench: Command = {
  spec: {
    name: 'bench',
    summary: 'training, sampling, rollout and GRPO-step speed of the model on the active backend (docs/backends.md)',
    options: {
      json: { kind: 'flag', help: 'print the result as JSON' },
      markdown: { kind: 'flag', help: 'print the Backends table of docs/backends.md' },
      model: { kind: 'string', help: 'model shape DxLxH, e.g. 128x4x4 (default: the default model)' },
      runs: { kind: 'number', help: 'timed repetitions (median reported)', default: 5 },
      parts: { kind: 'string', help: `what to measure, comma-separated: ${BENCH_PARTS.join(', ')}`,
        default: BENCH_PARTS.join(',') },
      prompts: { kind: 'number',
        help: 'training tasks of the timed GRPO step, x 8 rollouts (the full preset: 16 strong, 32 instruct)',
        default: 32 },
      regime: { kind: 'string', choices: [...REGIMES, 'both'],
        help: 'whose base checkpoint rolls out the GRPO step (its trajectories set the step\'s length)',
        default: 'both' },
      'share-prompts': { kind: 'flag',
        help: 'read each group\'s prompt once in the rollout and GRPO figures (--set grpo.sharePrompts=true of a ' +
        'run)' },
      anchor: { kind: 'string',
        help: 'a Python interpreter with torch: the same model and shapes in PyTorch beside ours ' +
        '(scripts/bench-torch.py)' },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    const runs = positiveInt('--runs', args.runs, 100);
    const prompts = positiveInt('--prompts', args.prompts, 64);
    if (prompts >= 8 &&
      prompts % 4 !== 0) throw new UsageError(`--prompts must be 1 to 7 or a multiple of 4 (four mini-batches), got ` +
      `${prompts}`);
    if (args.model !== undefined) parseModelShape(args.model as string);
    const parts = (args.parts as string).split(',').map((p) => p.trim()) as BenchPart[];
    const unknown = parts.filter((p) => !(BENCH_PARTS as readonly string[]).includes(p));
    if (unknown.length > 0 ||
      parts.length === 0) throw new UsageError(`--parts must list some of ${BENCH_PARTS.join(', ')}, got ` +
      `"${args.parts}"`);
    inputOf('--data', () => { loadTokenizer(path.join(args.data as string, 'vocab.json')); splitTasks('id',
      args.data as string); });
    await initBackend({ backend: args.backend as string | undefined, verbose: !args.json && !args.markdown });
    const regimes = args.regime === 'both' ? REGIMES : [args.regime as RegimeName];
    const res = runBench({
      runs, dataDir: args.data as string, model: args.model as string | undefined, prompts, regimes, parts,
      sharePrompts: Boolean(args['share-prompts']), anchor: args.anchor as string | undefined,
        log: (msg) => process.stderr.write(`[bench] ${msg}\n`),
    });
    const text = args.json ? JSON.stringify(res, null, 2) : args.markdown ? benchMarkdown(res) : formatBench(res);
    process.stdout.write(text + '\n');
  },
};

const run: Command = {
  spec: {
    name: 'run',
    summary: 'one experiment: metrics.jsonl, summary.json, checkpoint (see --list)',
    notes: 'The output folder is the tool\'s only where it holds a run.json of ours: a fresh run refuses a folder ' +
      'with other ' +
      'files and no run.json, and --force removes only the entries a run writes (run.json, metrics.jsonl, ' +
        'rollouts.jsonl, ' +
      'rollouts-sample.jsonl, summary.json, checkpoint/, best/, resume*/, branches/), never anything else.\n' +
        EXIT_HELP,
    options: {
      config: { kind: 'string', help: 'experiment name (toolrl run --list)' },
      preset: { kind: 'string', choices: PRESETS, help: 'size preset', default: 'quick' },
      regime: { kind: 'string', choices: REGIMES,
        help: 'which base the config starts from (strong: data/checkpoints/base, ' +
        'instruct: data/checkpoints/instruct)', default: DEFAULT_REGIME },
      seed: { kind: 'seed', help: 'seed of the run, an integer in [0, 4294967295]', default: 1 },
      set: { kind: 'list', help: 'override a config field: --set grpo.lr=3e-4 (repeatable)' },
      out: { kind: 'string',
        help: 'output folder (default data/results/<store>/<config>/seed-<n>, store = the preset, ' +
        'with -instruct in that regime; a branch goes under data/results/<store>/branches/)' },
      resume: { kind: 'flag', help: 'continue a killed run from OUT/resume/ (only the same run)' },
      force: { kind: 'flag',
        help: 'remove the results a run wrote in the output folder (nothing else) and start again' },
      init: { kind: 'string', help: 'start from this checkpoint folder instead of the config\'s initial policy' },
      branch: { kind: 'string',
        help: 'continue the run in this folder from its branch point --at STEP under --config' },
      at: { kind: 'number', help: 'the global RL step of the --branch point' },
      list: { kind: 'flag', help: 'list the experiment configs and exit' },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    if (args.list) {
      const specs = listExperiments();
      const width = Math.max(...specs.map((e) => e.name.length)) + 2;
      for (const e of specs) process.stdout.write(`${e.name.padEnd(width)}${e.title}\n`);
      return;
    }
    if (args.config === undefined) throw new UsageError('--config NAME is required (see toolrl run --list)');
    const seed = args.seed as number;
    let spec;
    try {
      spec = getExperiment(args.config as string);
    } catch (e) {
      throw new UsageError(`--config: ${(e as Error).message}`);
    }
    const preset = getPreset(args.preset as string, args.regime as string);
    const overrides = parseOverrides(args.set as string[]);
    if ((args.branch === undefined) !== (args.at === undefined)) throw new UsageError('--branch DIR and --at STEP ' +
      'go together');
    const branch = args.branch !== undefined ? { from: args.branch as string, step: args.at as number } : undefined;
    const out = (args.out as string | undefined) ??
      (branch ? branchResultsDir(preset.store, spec.name, branch.from, branch.step) : resultsDir(preset.store,
        spec.name, seed));
    const opts: RunOptions = { preset, seed, out, overrides, resume: Boolean(args.resume), force: Boolean(args.force),
      initCheckpoint: args.init as string | undefined, branch, dataDir: args.data as string,
        shouldStop: parentWatch() };
    // every option, config, bound and input file, before the backend starts and the folder is touched
    const plan = planRun(spec, opts);
    await initBackend({ backend: args.backend as string | undefined, verbose: true });
    const summary = await runExperiment(spec, opts, plan);
    // the path as the user gave it: absolute stays absolute, relative stays relative
    process.stdout.write(`wrote ${path.join(out, 'summary.json')}\n`);
    const id = summary.eval.id;
    if (id) process.stdout.write(`ID mean accuracy ${id.mean.toFixed(3)}\n`);
    if (summary.rl) {
      const r = summary.rl;
      process.stdout.write(`RL: peak val ${r.peakValAccuracy.toFixed(3)}, final val ` +
        `${r.finalValAccuracy.toFixed(3)}, ` +
        `collapse step ${r.collapseStep ?? 'none'}, final full-collapse share ` +
          `${r.finalStates.fullCollapse.toFixed(3)}\n`);
    }
  },
};

/**
 * A run started by `reproduce` gets its parent's pid in TOOLRL_PARENT_PID. When that parent dies (even by
 * kill -9, which lets it clean up nothing), the run is re-parented, and it stops at its next step rather than
 * go on writing results nobody waits for (a rerun of reproduce resumes it).
 */
function parentWatch(): (() => string | null) | undefined {
  const want = Number(process.env.TOOLRL_PARENT_PID);
  if (!Number.isInteger(want) || want <= 0) return undefined;
  return () => (process.ppid !== want ? `the process that started this run (pid ${want}) has ended` : null);
}

export const COMMANDS: Command[] = [data, evalCmd, calibrateCommand, bench, run, reproduceCommand, reportCommand,
  pointsCommand];
