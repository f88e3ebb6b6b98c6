/**
 * Branching (beyond the paper): continue a run from one of its past RL steps under another method.
 *
 *   npx toolrl run --config ets --branch data/results/full/vanilla-rl/seed-1 --at 40
 *
 * takes the parent's policy, AdamW moments and sampler PRNG as they were after its RL step 40 (a branch
 * point), and runs `ets` from there: the new run's logs start with the parent's first 40 steps, and its
 * own stages go on from step 41, so a vanilla run just before its probe spikes can be continued with ETS's
 * SFT phases or with the collapse guard, and compared with how the parent went on. A branch of a run under
 * its own config continues it exactly (same backend), which is how this is tested.
 *
 * Branch points: a run whose preset keeps them (`resumePoints`) copies every resume state it saves into
 * `branches/step-<n>/` (n = the global step). The parent must be a single-GRPO-stage run (vanilla, a
 * learning-rate sweep point, OPS, HBG, ...), and the branch point must fall inside the new config's first
 * RL stage.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Tokenizer } from '../../format/tokenizer';
import { MetricsLog, readMetrics } from '../../train/metrics';
import { keepFirstBytes } from '../../util/jsonl';
import { writing } from '../../util/errors';
import { asResumeState, readStateFolder, ResumeState } from './resume';
import { DEFAULT_RESULTS_ROOT, RunIdentity, readRunJson } from './folder';
import { StageSpec } from '../registry/spec';

/** Where a run keeps the branch point of global step `step`. */
export function branchPointDir(runDir: string, step: number): string {
  return path.join(runDir, 'branches', `step-${String(step).padStart(6, '0')}`);
}

/** The global steps a run has branch points for, ascending. */
export function listBranchPoints(runDir: string): number[] {
  const dir = path.join(runDir, 'branches');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir)
    .map((d) => /^step-(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null && fs.existsSync(path.join(dir, m[0], 'state.json')))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** Keep the resume state just saved in `out/resume/` as the branch point of global step `step`. */
export function keepBranchPoint(out: string, step: number): void {
  const dest = branchPointDir(out, step);
  fs.rmSync(dest, { recursive: true, force: true });
  try {
    writing(dest, () => {
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      fs.cpSync(path.join(out, 'resume'), dest, { recursive: true });
    });
  } catch (e) {
    fs.rmSync(dest, { recursive: true, force: true }); // half a copy is no branch point
    throw e;
  }
}

/**
 * Where a branch run goes unless --out says otherwise: beside the preset's experiments, under
 * `<root>/<preset>/branches/<config>-from-<parent config>-<parent seed folder>-at-<step>/`, where the report
 * and the notebooks find it (lib/report/store/results.ts) and git keeps it (unlike a run's own `branches/` points).
 */
export function branchResultsDir(preset: string, config: string, from: string, step: number,
  root = DEFAULT_RESULTS_ROOT): string {
  const parent = fs.existsSync(path.join(from, 'run.json')) ? readRunJson(from).config : undefined;
  const parentName = parent ?? path.basename(path.dirname(path.resolve(from)));
  return path.join(root, preset, 'branches',
    `${config}-from-${parentName}-${path.basename(path.resolve(from))}-at-${step}`);
}

/** Check a branch request before anything is written; throws naming what is wrong. */
export function validateBranch(from: string, step: number, stages: StageSpec[], child: Pick<RunIdentity,
  'config' | 'preset' | 'data'>): void {
  if (!Number.isInteger(step) || step < 1) throw new Error(`--at must be an integer >= 1, got ${step}`);
  if (!fs.existsSync(path.join(from, 'run.json'))) throw new Error(`--branch: ${from} holds no run (no run.json)`);
  const parent = readRunJson(from);
  const points = listBranchPoints(from);
  if (!points.includes(step)) {
    throw new Error(`--branch: ${from} has no branch point at step ${step} (` +
      (points.length ? `it has ${points.join(', ')}` : 'it kept none: its preset does not keep resume points') + ')');
  }
  for (const k of ['preset', 'data'] as const) {
    if (parent[k] !== child[k]) throw new Error(`--branch: ${from} ran with ${k} ${parent[k]}, this run has ` +
      `${child[k]}`);
  }
  const first = stages[0];
  if (!first ||
    first.kind !== 'grpo') throw new Error(`--branch: config ${child.config} does not start with an RL stage`);
  const steps = first.config.steps;
  if (steps !== undefined && step >= steps) {
    throw new Error(`--branch: step ${step} is past the first RL stage of ${child.config} (${steps} steps)`);
  }
}

/**
 * The parent's branch point as a resume state of the new run: RL stage 0 at the parent's step, with the
 * parent's logs up to that step copied into the new folder.
 */
export function loadBranchPoint(from: string, step: number, out: string, tok: Tokenizer): ResumeState {
  const saved = readStateFolder(branchPointDir(from, step), tok);
  const id = saved.meta.identity;
  if (saved.meta.stage !== 0 || saved.meta.globalStepBase !== 0) {
    saved.model.dispose();
    throw new Error(`--branch: the branch point at step ${step} of ${from}` +
      `${id ? ` (${id.config})` : ''} is in RL stage ` +
        `${saved.meta.stage}${saved.meta.globalStepBase !== 0 ? ' after an SFT phase' : ''}; only points before any ` +
        `SFT phase of a single-RL-stage run can be branched`);
  }
  return asResumeState(saved, (metrics: MetricsLog, kept) => {
    const parentMetrics = readMetrics(path.join(from, 'metrics.jsonl')).slice(0, kept.metricsLines);
    for (const r of parentMetrics) metrics.log(r);
    const rollouts = path.join(from, 'rollouts.jsonl');
    if (fs.existsSync(rollouts) && kept.rolloutBytes > 0) {
      const mine = path.join(out, 'rollouts.jsonl');
      writing(mine, () => fs.copyFileSync(rollouts, mine));
      // the parent's rollouts up to the branch point, as a resume trims its own
      keepFirstBytes(mine, kept.rolloutBytes);
    }
  });
}
