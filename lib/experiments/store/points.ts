/**
 * The paper's "capability intact" evidence around a collapse: the collapsed GRPO model keeps its skill in another
 * call format (ACEBench's own: 24.75 against the base's 26.0) while it scores 0 in its own. A final checkpoint shows
 * the end state only; the branch points a full-preset run keeps every 10 RL steps (branch.ts) show the way there.
 * `evaluatePoints` evaluates the branch points around a run's collapse step (or the steps asked for) greedily on ID
 * and format-OOD and writes `<run>/points.json` (committed with the store; the branch points themselves are not):
 *
 *   npx toolrl points --run data/results/full-instruct/vanilla-rl-lr1e-3/seed-1
 */
import * as fs from 'fs';
import * as path from 'path';
import { loadCheckpoint } from '../../model/checkpoint';
import { loadTokenizer } from '../../format/tokenizer';
import { loadTasks } from '../../envs/data';
import { evaluateModel } from '../../train/evaluate';
import { ProgressBar } from '../../util/progress';
import { writeJsonAtomic } from '../../util/atomic';
import { branchPointDir, listBranchPoints } from './branch';
import { EvalSplitName, splitSyntax } from '../run/inputs';
import { SplitEval, outcomeStrings } from '../run/runner';

/** Branch points evaluated on each side of the collapse step (10 RL steps apart in the full preset). */
export const POINTS_AROUND = 2;

export interface PointEval {
  /** The global step of the branch point. */
  step: number;
  eval: Partial<Record<EvalSplitName, SplitEval>>;
}

export interface PointsFile {
  run: string;
  /** The collapse step the points were chosen around (summary.json's rl.collapseStep), null when given explicitly. */
  collapseStep: number | null;
  points: PointEval[];
}

/**
 * The branch points of `runDir` to evaluate: `steps` if given, else POINTS_AROUND on each side of its collapse step.
 */
export function pointsAround(runDir: string, steps?: number[]): { steps: number[]; collapseStep: number | null } {
  const have = listBranchPoints(runDir);
  if (!have.length) throw new Error(`${runDir} has no branch points (branches/step-*/state.json; the full preset ` +
    `keeps them, checkpoints are not committed)`);
  if (steps && steps.length) {
    const missing = steps.filter((s) => !have.includes(s));
    if (missing.length) throw new Error(`${runDir} has no branch point at step ${missing.join(', ')} (it has ` +
      `${have.join(', ')})`);
    return { steps, collapseStep: null };
  }
  const summary = JSON.parse(fs.readFileSync(path.join(runDir, 'summary.json'),
    'utf8')) as { rl?: { collapseStep?: number | null } };
  const c = summary.rl?.collapseStep ?? null;
  if (c === null) throw new Error(`${runDir} did not collapse (summary.json rl.collapseStep is null): give --steps`);
  const before = have.filter((s) => s < c).slice(-POINTS_AROUND);
  const after = have.filter((s) => s >= c).slice(0, POINTS_AROUND);
  return { steps: [...before, ...after], collapseStep: c };
}

export function evaluatePoints(runDir: string,
  opts: { steps?: number[]; splits?: EvalSplitName[]; dataDir?: string; progress?: boolean } = {}): PointsFile {
  const dataDir = opts.dataDir ?? 'data';
  const splits = opts.splits ?? ['id', 'format_ood'];
  const { steps, collapseStep } = pointsAround(runDir, opts.steps);
  const tok = loadTokenizer(path.join(dataDir, 'vocab.json'));
  const points: PointEval[] = [];
  for (const step of steps) {
    const { model } = loadCheckpoint(path.join(branchPointDir(runDir, step), 'model'),
      { expectVocabFingerprint: tok.fingerprint });
    try {
      const ev: PointEval['eval'] = {};
      for (const split of splits) {
        const tasks = loadTasks(split === 'id' || split === 'id_constrained' ? 'test' : split, dataDir);
        const bar = new ProgressBar({ total: tasks.length, label: `step ${step} ${split}`,
          silent: opts.progress === false });
        const { results, ...rest } = evaluateModel(model, tok, tasks,
          { syntax: splitSyntax(split), onProgress: (d) => bar.update(d) });
        bar.finish(`mean ${rest.mean.toFixed(3)}`);
        ev[split] = { ...rest, outcomes: outcomeStrings(results) };
      }
      points.push({ step, eval: ev });
    } finally {
      model.dispose();
    }
  }
  const out: PointsFile = { run: path.basename(path.dirname(runDir)) + '/' + path.basename(runDir), collapseStep,
    points };
  writeJsonAtomic(path.join(runDir, 'points.json'), out);
  return out;
}
