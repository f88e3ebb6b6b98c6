/**
 * `toolrl calibrate --checkpoint DIR`: what GRPO will see from this starting policy (lib/experiments/calibrate.ts),
 * printed as a table and written to DIR/calibration.json.
 */
import * as path from 'path';
import { Command, UsageError, positiveInt } from './args';
import { checkCheckpointArg, inputOf } from './inputs';
import { writeFileAtomic } from '../util/atomic';
import { initBackend, activeBackend } from '../backend';
import { loadTokenizer } from '../format/tokenizer';
import { loadCheckpoint } from '../model/checkpoint';
import { loadTasks } from '../envs/data';
import { calibrate, formatCalibration, defaultCalibrationConfig } from '../experiments/calibrate';
import { DEFAULT_REGIME, REGIMES } from '../experiments/registry/regimes';
import { getPreset } from '../experiments/registry/presets';
import { ProgressBar } from '../util/progress';

export const calibrateCommand: Command = {
  spec: {
    name: 'calibrate',
    summary: 'measure a checkpoint before RL: sampled success, signal groups, argument copying, probe, greedy ID/OOD',
    options: {
      checkpoint: { kind: 'string', help: 'checkpoint folder (model.json + weights.bin)' },
      tasks: { kind: 'number', help: 'training tasks sampled, in groups of 8',
        default: defaultCalibrationConfig.tasks },
      'eval-limit': { kind: 'number', help: 'test tasks per category for the greedy evaluations (0 = all)',
        default: 0 },
      seed: { kind: 'seed', help: 'sampling seed, an integer in [0, 4294967295]', default: 1 },
      regime: { kind: 'string', choices: REGIMES,
        help: 'whose pre-registered targets to check (lib/experiments/registry/regimes.ts)', default: DEFAULT_REGIME },
      json: { kind: 'flag', help: 'print the report as JSON' },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    const dir = args.checkpoint as string | undefined;
    if (dir === undefined) throw new UsageError('--checkpoint DIR is required');
    positiveInt('--tasks', args.tasks, 300); // the training split holds 300 tasks
    const evalLimit = args['eval-limit'] as number;
    if (!Number.isInteger(evalLimit) ||
      evalLimit < 0) throw new UsageError(`--eval-limit must be an integer >= 0, got ${evalLimit}`);
    const full = getPreset('full', args.regime as string); // targets, and the prompts per step of its study
    const dataDir = args.data as string;
    // every input before the backend starts: the checkpoint's files (and hash), the four splits
    checkCheckpointArg(dir, dataDir);
    const splits = inputOf('--data', () => ({
      train: loadTasks('train', dataDir), id: loadTasks('test', dataDir),
      formatOod: loadTasks('format_ood', dataDir), contentOod: loadTasks('content_ood', dataDir),
    }));
    await initBackend({ backend: args.backend as string | undefined, verbose: !args.json });
    const tok = loadTokenizer(path.join(dataDir, 'vocab.json'));
    const { model } = loadCheckpoint(dir, { expectVocabFingerprint: tok.fingerprint });
    const progress: { bar: ProgressBar | null; phase: string } = { bar: null, phase: '' }; // one bar per phase
    try {
      const report = calibrate(model, tok, splits, { tasks: args.tasks as number,
        evalPerCategory: args['eval-limit'] as number, seed: args.seed as number },
      (name, done, total) => {
        if (name !== progress.phase) {
          progress.bar?.finish();
          progress.phase = name;
          progress.bar = new ProgressBar({ total, label: name });
        }
        progress.bar?.update(done);
      }, full.regime.targets, full.promptsPerStep);
      progress.bar?.finish();
      const out = { checkpoint: dir, backend: activeBackend(), regime: full.regime.name, ...report };
      const file = path.join(dir, 'calibration.json');
      writeFileAtomic(file, JSON.stringify(out, null, 1) + '\n');
      process.stdout.write(args.json ? JSON.stringify(out, null, 2) + '\n' : formatCalibration(report) +
        `\nwrote ${file}\n`);
    } finally {
      model.dispose();
    }
  },
};
