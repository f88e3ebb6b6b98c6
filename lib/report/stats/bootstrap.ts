/**
 * 95% intervals for the study's accuracies, by bootstrap over test tasks and seeds (docs/reproduce.md).
 *
 * A method's score is the paper's headline: the mean over categories of the per-category accuracy, averaged
 * over seeds. Its uncertainty has two sources, the test tasks (400 ID tasks are a sample of what the
 * generator can pose) and the seeds (each run is one draw of the training noise). One bootstrap replicate
 * resamples both: the tasks of every category with replacement, and the seeds with replacement; the interval
 * is the 2.5th to 97.5th percentile of the replicates.
 *
 * A difference between two methods is paired over tasks: each replicate draws one set of tasks and scores
 * both methods on it (their seeds drawn independently), so that the tasks both find easy or hard cancel out
 * and only the methods' difference remains. An interval that excludes 0 is a difference the data support.
 * The replicates come from the project's seeded PRNG, so a table is the same every time it is rebuilt.
 */
import { Rng } from '../../prng';

/** Per category, one '1' / '0' per task (a run's summary.json `outcomes`). */
export type Outcomes = Record<string, string>;

export interface Interval {
  /** The point estimate (no resampling). */
  mean: number;
  lo: number;
  hi: number;
}

export interface BootstrapOptions {
  /** Replicates. Default 2000. */
  replicates?: number;
  /** PRNG seed. Default 20260606. */
  seed?: number;
  /** Coverage of the interval. Default 0.95; a Bonferroni correction over k comparisons asks for 1 - 0.05 / k. */
  level?: number;
}

/** The seeds' outcomes as 0/1 arrays per category; null when the seeds did not evaluate the same tasks. */
function matrix(seeds: Outcomes[], cats: string[]): Uint8Array[][] | null {
  const out: Uint8Array[][] = [];
  for (const s of seeds) {
    const row: Uint8Array[] = [];
    for (const c of cats) {
      const str = s[c];
      if (str === undefined) return null;
      row.push(Uint8Array.from(str, (ch) => (ch === '1' ? 1 : 0)));
    }
    out.push(row);
  }
  for (let j = 0; j < cats.length; j++) if (out.some((r) => r[j].length !== out[0][j].length ||
    r[j].length === 0)) return null;
  return out;
}

/** Mean over `seedIdx` of the mean over categories of the accuracy on tasks `taskIdx[c]`. */
function score(m: Uint8Array[][], seedIdx: number[], taskIdx: Int32Array[]): number {
  let total = 0;
  for (const s of seedIdx) {
    let catSum = 0;
    m[s].forEach((xs, c) => {
      const idx = taskIdx[c];
      let k = 0;
      for (let i = 0; i < idx.length; i++) k += xs[idx[i]];
      catSum += k / idx.length;
    });
    total += catSum / m[s].length;
  }
  return total / seedIdx.length;
}

const identity = (n: number) => Int32Array.from({ length: n }, (_, i) => i);
const draw = (rng: Rng, n: number) => Int32Array.from({ length: n }, () => rng.int(0, n - 1));
const allSeeds = (n: number) => Array.from({ length: n }, (_, i) => i);

function percentiles(xs: number[], mean: number, level = 0.95): Interval {
  const s = xs.slice().sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
  return { mean, lo: at((1 - level) / 2), hi: at(1 - (1 - level) / 2) };
}

/**
 * The score of one method (its seeds' outcomes) with a 95% interval, or null when there is nothing to
 * resample (no seed, or seeds evaluated on different tasks).
 */
export function scoreInterval(seeds: Outcomes[], cats: string[], opts: BootstrapOptions = {}): Interval | null {
  const m = seeds.length ? matrix(seeds, cats) : null;
  if (!m) return null;
  const sizes = m[0].map((xs) => xs.length);
  const rng = new Rng(opts.seed ?? 20260606);
  const reps: number[] = [];
  for (let b = 0; b < (opts.replicates ?? 2000); b++) {
    reps.push(score(m, allSeeds(m.length).map(() => rng.int(0, m.length - 1)), sizes.map((n) => draw(rng, n))));
  }
  return percentiles(reps, score(m, allSeeds(m.length), sizes.map(identity)), opts.level);
}

/**
 * Score of `a` minus score of `b` with a 95% (`opts.level`) interval, tasks paired; null when they were not evaluated
 * alike.
 */
export function differenceInterval(a: Outcomes[], b: Outcomes[], cats: string[],
  opts: BootstrapOptions = {}): Interval | null {
  const ma = a.length ? matrix(a, cats) : null;
  const mb = b.length ? matrix(b, cats) : null;
  if (!ma || !mb) return null;
  const sizes = ma[0].map((xs) => xs.length);
  if (mb[0].some((xs, c) => xs.length !== sizes[c])) return null;
  const rng = new Rng(opts.seed ?? 20260606);
  const reps: number[] = [];
  for (let r = 0; r < (opts.replicates ?? 2000); r++) {
    const tasks = sizes.map((n) => draw(rng, n));
    const sa = allSeeds(ma.length).map(() => rng.int(0, ma.length - 1));
    const sb = allSeeds(mb.length).map(() => rng.int(0, mb.length - 1));
    reps.push(score(ma, sa, tasks) - score(mb, sb, tasks));
  }
  const full = sizes.map(identity);
  return percentiles(reps, score(ma, allSeeds(ma.length), full) - score(mb, allSeeds(mb.length), full), opts.level);
}

/** "41.3 [38.0, 44.5]" in percent; "" for null. */
export function formatInterval(iv: Interval | null, digits = 1, signed = false): string {
  if (!iv) return '';
  const f = (x: number) => `${signed && x > 0 ? '+' : ''}${(x * 100).toFixed(digits)}`;
  return `${f(iv.mean)} [${f(iv.lo)}, ${f(iv.hi)}]`;
}
