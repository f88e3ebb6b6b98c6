/**
 * `toolrl points --run DIR [--steps 20,30] [--splits id,format_ood]`: greedy evaluation of a run's branch points
 * around its collapse (lib/experiments/store/points.ts), written to DIR/points.json.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Command, UsageError } from './args';
import { initBackend } from '../backend';
import { EVAL_SPLITS, EvalSplitName } from '../experiments/run/inputs';

export const pointsCommand: Command = {
  spec: {
    name: 'points',
    summary: 'evaluate a run\'s branch points around its collapse on ID and format-OOD (writes points.json)',
    options: {
      run: { kind: 'string', help: 'run folder with branches/ (a full-preset RL run)' },
      steps: { kind: 'string',
        help: 'comma-separated global steps (default: 2 branch points each side of the collapse step)' },
      splits: { kind: 'string', help: 'comma-separated splits', default: 'id,format_ood' },
      backend: { kind: 'string', choices: ['tensorflow', 'wasm', 'cpu'], help: 'tfjs backend (default: automatic)' },
      data: { kind: 'string', help: 'data folder', default: 'data' },
    },
  },
  async run(args) {
    const run = args.run as string | undefined;
    if (run === undefined) throw new UsageError('--run DIR is required');
    if (!fs.existsSync(path.join(run,
      'summary.json'))) throw new UsageError(`--run: ${run} holds no finished run (no summary.json)`);
    const steps = args.steps === undefined ? undefined : String(args.steps).split(',').map((s) => Number(s.trim()));
    if (steps &&
      !steps.every((s) => Number.isInteger(s) &&
      s > 0)) throw new UsageError(`--steps must be positive integers, got ${args.steps}`);
    const splits = String(args.splits).split(',').map((s) => s.trim()) as EvalSplitName[];
    const bad = splits.filter((s) => !EVAL_SPLITS.includes(s) || s === 'id_constrained');
    if (bad.length) throw new UsageError(`--splits: unknown split ${bad.join(', ')} (id, format_ood, content_ood, ` +
      `format_content_ood)`);
    const { pointsAround, evaluatePoints } = await import('../experiments/store/points');
    try {
      pointsAround(run, steps); // the branch points exist, before the backend starts
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    await initBackend({ backend: args.backend as string | undefined, verbose: true });
    const res = evaluatePoints(run, { steps, splits, dataDir: args.data as string });
    for (const p of res.points) {
      process.stdout.write(`step ${p.step}: ${splits.map((s) => `${s} ${(100 *
        (p.eval[s]?.mean ?? 0)).toFixed(1)}%`).join(', ')}\n`);
    }
    process.stdout.write(`wrote ${path.join(run, 'points.json')}\n`);
  },
};
