/**
 * The subcommands of `toolrl`. Each is a thin shell over lib: parse options, call the library, print.
 */
import * as path from 'path';
import { Command, UsageError, parseOverrides } from './args';
import { initBackend } from '../backend';
import { PRESETS, getPreset } from '../experiments/presets';
import { getExperiment, listExperiments } from '../experiments/configs';
import { resultsDir, runExperiment } from '../experiments/runner';
import { runEval, formatEval, EvalSplit } from './eval';
import { runBench, formatBench } from './bench';
import { writeDataset } from '../envs/data';
import { reproduceCommand, reportCommand } from './reproduce';

const SPLITS = ['id', 'format_ood', 'content_ood'];

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
      limit: { kind: 'number', help: 'tasks per category (0 = all)', default: 0 },
      constrained: { kind: 'flag', help: 'forbid structurally impossible tokens after <tool_call> (capability probe)' },
      'json-start': { kind: 'flag', help: 'stricter probe: allow only {" right after <tool_call> (JSON splits)' },
      json: { kind: 'flag', help: 'print the result as JSON' },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    if ((args.checkpoint === undefined) === (args.policy === undefined)) {
      throw new UsageError('eval: give exactly one of --checkpoint DIR or --policy teacher');
    }
    if (args.policy !== undefined && (args.constrained || args['json-start'])) {
      throw new UsageError('eval: --constrained and --json-start need --checkpoint');
    }
    if (args.checkpoint !== undefined) await initBackend({ backend: args.backend as string | undefined, verbose: !args.json });
    const res = await runEval({
      checkpoint: args.checkpoint as string | undefined,
      split: args.split as EvalSplit,
      limit: args.limit as number,
      constrained: Boolean(args.constrained),
      jsonStart: Boolean(args['json-start']),
      dataDir: args.data as string,
      progress: true,
    });
    process.stdout.write(args.json ? JSON.stringify(res, null, 2) + '\n' : formatEval(res) + '\n');
  },
};

const bench: Command = {
  spec: {
    name: 'bench',
    summary: 'training and rollout throughput of the default model on the active backend',
    options: {
      json: { kind: 'flag', help: 'print the result as JSON' },
      runs: { kind: 'number', help: 'timed repetitions (median reported)', default: 5 },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    await initBackend({ backend: args.backend as string | undefined, verbose: !args.json });
    const res = runBench({ runs: args.runs as number, dataDir: args.data as string });
    process.stdout.write(args.json ? JSON.stringify(res, null, 2) + '\n' : formatBench(res) + '\n');
  },
};

const run: Command = {
  spec: {
    name: 'run',
    summary: 'one experiment: metrics.jsonl, summary.json, checkpoint (see --list)',
    options: {
      config: { kind: 'string', help: 'experiment name (toolrl run --list)' },
      preset: { kind: 'string', choices: PRESETS, help: 'size preset', default: 'quick' },
      seed: { kind: 'number', help: 'seed of the run', default: 1 },
      set: { kind: 'list', help: 'override a config field: --set grpo.lr=3e-4 (repeatable)' },
      out: { kind: 'string', help: 'output folder (default data/results/<preset>/<config>/seed-<n>)' },
      resume: { kind: 'flag', help: 'continue a killed run from OUT/resume/' },
      init: { kind: 'string', help: 'start from this checkpoint folder instead of the config\'s initial policy' },
      list: { kind: 'flag', help: 'list the experiment configs and exit' },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    if (args.list) {
      for (const e of listExperiments()) process.stdout.write(`${e.name.padEnd(18)}${e.title}\n`);
      return;
    }
    if (args.config === undefined) throw new UsageError('run: --config NAME is required (see toolrl run --list)');
    const seed = args.seed as number;
    if (!Number.isInteger(seed) || seed < 1) throw new UsageError(`run: --seed must be an integer >= 1, got ${seed}`);
    let spec;
    try {
      spec = getExperiment(args.config as string);
    } catch (e) {
      throw new UsageError(`run: --config: ${(e as Error).message}`);
    }
    const preset = getPreset(args.preset as string);
    const overrides = parseOverrides(args.set as string[]);
    const out = (args.out as string | undefined) ?? resultsDir(preset.name, spec.name, seed);
    await initBackend({ backend: args.backend as string | undefined, verbose: true });
    const summary = runExperiment(spec, { preset, seed, out, overrides, resume: Boolean(args.resume),
      initCheckpoint: args.init as string | undefined, dataDir: args.data as string });
    process.stdout.write(`wrote ${path.relative(process.cwd(), path.join(out, 'summary.json')) || 'summary.json'}\n`);
    const id = summary.eval.id;
    if (id) process.stdout.write(`ID mean accuracy ${id.mean.toFixed(3)}\n`);
    if (summary.rl) {
      const r = summary.rl;
      process.stdout.write(`RL: peak val ${r.peakValAccuracy.toFixed(3)}, final val ${r.finalValAccuracy.toFixed(3)}, ` +
        `collapse step ${r.collapseStep ?? 'none'}, final full-collapse share ${r.finalStates.fullCollapse.toFixed(3)}\n`);
    }
  },
};

export const COMMANDS: Command[] = [data, evalCmd, bench, run, reproduceCommand, reportCommand];
