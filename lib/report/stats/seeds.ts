/**
 * Mean and standard deviation over seeds, computed with a danfojs DataFrame (groupby + agg), and the
 * paper's way of printing them: percent with one decimal, "mean ± std".
 *
 * The std is the sample standard deviation (n - 1 in the denominator, as pandas and danfojs compute it):
 * with 2-3 seeds it is a rough spread, not a confidence interval. With a single seed there is no spread
 * to show, so the cell is the mean alone (danfojs would print 0, which would claim a precision we do not
 * have).
 */
import * as dfd from 'danfojs-node';

export interface SeedStat {
  mean: number;
  std: number;
  /** Number of seeds that had the value. */
  n: number;
}

/** One observation: which table cell (`key`, e.g. "vanilla-rl|base") and its value for one seed. */
export interface Observation {
  key: string;
  value: number;
}

/**
 * Aggregate observations per key. Keys without observations are simply absent from the result, so a
 * split a run did not evaluate stays an empty cell instead of a 0.
 */
export function seedStats(obs: Observation[]): Map<string, SeedStat> {
  const out = new Map<string, SeedStat>();
  const finite = obs.filter((o) => Number.isFinite(o.value));
  if (!finite.length) return out;
  const df = new dfd.DataFrame(finite.map((o) => ({ key: o.key, value: o.value })));
  const agg = df.groupby(['key']).agg({ value: ['mean', 'std', 'count'] });
  const cols = agg.columns as string[];
  const iKey = cols.indexOf('key');
  const iMean = cols.indexOf('value_mean');
  const iStd = cols.indexOf('value_std');
  const iCount = cols.indexOf('value_count');
  for (const row of agg.values as unknown[][]) {
    const n = Number(row[iCount]);
    out.set(String(row[iKey]), { mean: Number(row[iMean]), std: n > 1 ? Number(row[iStd]) : 0, n });
  }
  return out;
}

/** "12.3 ± 1.4" for fractions in [0, 1] shown as percent; "12.3" for one seed; "" when missing. */
export function formatPercent(s: SeedStat | undefined, digits = 1): string {
  if (!s) return '';
  const mean = (s.mean * 100).toFixed(digits);
  return s.n > 1 ? `${mean} ± ${(s.std * 100).toFixed(digits)}` : mean;
}

/** A probability as the probe tables print it: two decimals, or "4.1e-3" below 0.01 (the probe spans 1e-6 to 1). */
export function formatProbability(p: number): string {
  return p < 0.01 ? p.toExponential(1) : p.toFixed(2);
}

/** A learning rate as the paper writes it: 3e-4, 1e-6. */
export function formatLr(lr: number | undefined): string {
  if (lr === undefined || !Number.isFinite(lr)) return '';
  const [m, e] = lr.toExponential().split('e');
  const mant = Number(m);
  return `${Number.isInteger(mant) ? mant : mant.toFixed(2).replace(/0+$/, '')}e${Number(e)}`;
}
