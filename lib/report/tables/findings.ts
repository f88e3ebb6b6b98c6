/**
 * The paper's seven findings, judged per regime from the results store by fixed rules, each written from the
 * claim's own definition (never tuned to a result; test/report.findings.test.ts pins every verdict with a
 * hand-made store). Each verdict is one of
 *   reproduced    the data show what the paper reports
 *   partly        some of the methods or conditions do, others do not (the evidence says which)
 *   inverted      the data show the opposite, with intervals that exclude "no difference"
 *   not shown     no difference the intervals support, either way
 *   not testable  the precondition is missing (no collapse to explain, a split every run scores 0 on, no runs)
 * with the evidence (numbers from the store) next to it.
 *
 * Shared definitions:
 *   collapsed seed  its RL validation falls below a quarter of the higher of its peak and the base's accuracy on
 *                   the same validation tasks and stays there (tables.ts collapseVsStart); a method collapses when
 *                   most of its seeds do;
 *   above / below   the paired bootstrap difference of two rows on the same test tasks (bootstrap.ts) has its 95%
 *                   interval above / below 0;
 *   several tests   a verdict that rests on k paired comparisons says so, and says whether it holds when each
 *                   comparison is read at 1 - 0.05 / k (Bonferroni);
 *   late messages   lib/report/tables/anatomy.ts: the sampled messages of the last third of a run's RL steps, with
 * modes.
 * Rows are Table 1's, at the main learning rate. Where vanilla GRPO does not collapse at the main rate, F4 (which
 * needs an instability) reads the 'collapse-rate' group, the same signals at the rate where it does, if the
 * store has it, and says so.
 */
import { ExperimentResults, ResultsStore } from '../store/results';
import { ReportTable, ID_COLUMNS, baseValAccuracy, collapseVsStart, idAverage, probeExtreme,
  sweepExperiments } from './base';
import { Interval, Outcomes, differenceInterval, formatInterval } from '../stats/bootstrap';
import { formatLr } from '../stats/seeds';
import { COLLAPSE_LR } from '../../experiments/registry/configs';
import { PAPER_ROWS } from '../paper';
import { MODE_LABEL } from '../../format/types';
import { RunAnatomy, runAnatomy } from './anatomy';
import { getStorePreset } from '../../experiments/registry/presets';

export type Verdict = 'reproduced' | 'partly' | 'inverted' | 'not shown' | 'not testable';

export interface Finding {
  id: string;
  /** The paper's claim, with its numbers. */
  claim: string;
  verdict: Verdict;
  evidence: string;
  /**
   * The compared rows that have fewer seeds than the store's preset runs (e.g. "PRS, lr 1e-3: 1 of 3"), while the
   * study is still landing; absent when every row is complete. The verdict then reads "(preliminary)".
   */
  preliminary?: string;
}

/** The verdict as the tables print it: "inverted", or "inverted (preliminary)" while rows lack seeds. */
export const verdictLabel = (f: Finding): string => f.preliminary ? `${f.verdict} (preliminary)` : f.verdict;

type Split = 'id' | 'format_ood' | 'content_ood' | 'format_content_ood';
type Seed = ExperimentResults['seeds'][number];
const OOD_CATS = ['base', 'miss_param', 'miss_func'];
const CATS: Record<Split, string[]> = { id: ID_COLUMNS, format_ood: OOD_CATS, content_ood: OOD_CATS,
  format_content_ood: OOD_CATS };
const SPLIT_NAME: Record<Split, string> = { id: 'ID', format_ood: 'format-OOD', content_ood: 'content-OOD',
  format_content_ood: 'format+content-OOD' };

/** A probe probability counts as a control-token spike from here (the paper: 87% of messages a bare tag). */
export const SPIKE_LEVEL = 0.5;
/**
 * The paper's message signature holds in a run when at least this share of its late messages is a bare `<tool_call>`.
 */
export const SIGNATURE_SHARE = 0.5;
/**
 * A capability survives in another format when the collapsed runs keep at least this share of the base's score there.
 */
export const KEPT_SHARE = 0.5;
/** The family-wise error rate that a Bonferroni correction keeps (each of k comparisons at 1 - FAMILY_ALPHA / k). */
const FAMILY_ALPHA = 0.05;

/** A collapsed vanilla GRPO run (any learning rate): its experiment, seed and anatomy. */
interface CollapsedRun { e: ExperimentResults; seed: Seed; anatomy: RunAnatomy }

/** What the rules read from one store. */
class Evidence {
  readonly start: number | null;
  /** The seeds the store's preset runs (3 at `full`); null for a folder no preset names. */
  readonly studySeeds: number | null;
  /** The experiments the rule being judged compared (`diff`): whose seed counts qualify its verdict. */
  readonly compared = new Set<ExperimentResults>();
  constructor(readonly store: ResultsStore) {
    this.start = baseValAccuracy(store);
    let seeds: number | null = null;
    try {
      seeds = getStorePreset(store.preset).seeds.length;
    } catch {
      // a store folder named by no preset: seed counts are not judged
    }
    this.studySeeds = seeds;
  }

  exp(name: string): ExperimentResults | undefined {
    return this.store.experiments.find((e) => e.spec.name === name);
  }

  outcomes(e: ExperimentResults | undefined, split: Split): Outcomes[] | null {
    if (!e) return null;
    return seedOutcomes(e.seeds, split);
  }

  /** a − b on `split`, paired over the test tasks, at `level`; null when either is missing. */
  diff(a: string | ExperimentResults | undefined, b: string | ExperimentResults | undefined, split: Split = 'id',
    level = 0.95): Interval | null {
    const [ea, eb] = [typeof a === 'string' ? this.exp(a) : a, typeof b === 'string' ? this.exp(b) : b];
    for (const e of [ea, eb]) if (e) this.compared.add(e);
    const [oa, ob] = [this.outcomes(ea, split), this.outcomes(eb, split)];
    return oa && ob ? differenceInterval(oa, ob, CATS[split], { level }) : null;
  }

  /** Mean over seeds of a split's average (ID: of the four categories). */
  score(e: ExperimentResults | undefined, split: Split = 'id'): number | null {
    return e ? meanOf(e.seeds, split) : null;
  }

  /** Collapse steps per seed (null: held). */
  collapses(e: ExperimentResults | undefined): (number | null)[] {
    return e ? e.seeds.map((s) => collapseVsStart(s, e, this.start)) : [];
  }

  collapsed(e: ExperimentResults | undefined): boolean {
    const c = this.collapses(e);
    return c.length > 0 && c.filter((x) => x !== null).length * 2 > c.length;
  }

  /** Vanilla GRPO runs at any rate (the sweep, else vanilla-rl) whose seed collapsed, with their anatomy. */
  collapsedVanilla(): CollapsedRun[] {
    const sweep = sweepExperiments(this.store);
    const exps = sweep.length ? sweep : [this.exp('vanilla-rl')].filter((x): x is ExperimentResults => !!x);
    const out: CollapsedRun[] = [];
    for (const e of exps) {
      for (const seed of e.seeds) if (collapseVsStart(seed, e, this.start) !== null) out.push({ e, seed,
        anatomy: runAnatomy(e, seed, this.start) });
    }
    return out;
  }
}

function seedOutcomes(seeds: Seed[], split: Split): Outcomes[] | null {
  const o = seeds.map((s) => s.summary.eval[split]?.outcomes).filter((x): x is Outcomes => x !== undefined);
  return o.length === seeds.length && o.length > 0 ? o : null;
}

function meanOf(seeds: Seed[], split: Split): number | null {
  const v =
    seeds.map((s) => (split === 'id' ? idAverage(s.summary) : s.summary.eval[split]?.mean)).filter((x): x is number =>
    x !== undefined);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
}

const above = (iv: Interval | null) => iv !== null && iv.lo > 0;
const below = (iv: Interval | null) => iv !== null && iv.hi < 0;
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : `${(100 * x).toFixed(1)}%`);
const d = (iv: Interval | null) => (iv ? formatInterval(iv, 1, true) : '—');
const runName = (r: CollapsedRun) => `${r.e.spec.name} s${r.seed.seed}`;
function collapseText(ev: Evidence, e: ExperimentResults | undefined): string {
  const c = ev.collapses(e);
  const n = c.filter((x) => x !== null).length;
  return `collapsed in ${n} of ${c.length} seeds${n ? ` (steps ${c.map((x) => x ?? '—').join(', ')})` : ''}`;
}

/** A comparison of a rule: what is compared, its 95% interval, and the interval at the Bonferroni level. */
interface Comparison { name: string; iv: Interval | null; strict: Interval | null }

/** Every `a − b` of `pairs` at 95% and at the Bonferroni level for that many comparisons. */
function compare(ev: Evidence, pairs: [string, string][], split: Split = 'id'): Comparison[] {
  const strict = 1 - FAMILY_ALPHA / Math.max(1, pairs.length);
  return pairs.map(([a, b]) => ({ name: `${ev.exp(a)?.spec.label ?? a} − ${ev.exp(b)?.spec.label ?? b}`,
    iv: ev.diff(a, b, split), strict: ev.diff(a, b, split, strict) }));
}

/** "k paired comparisons; with Bonferroni (each at 98.75%) the verdict is V" or "... it holds". */
function bonferroniNote(k: number, verdict: Verdict, strictVerdict: Verdict): string {
  const level = `${Number((100 * (1 - FAMILY_ALPHA / k)).toFixed(2))}%`;
  return k < 2 ? '' : `${k} paired comparisons; with a Bonferroni correction (each at ${level}) ` +
    (strictVerdict === verdict ? 'the verdict holds' : `the verdict would be "${strictVerdict}"`);
}

function f1(ev: Evidence): Finding {
  const claim = 'Vanilla multi-turn GRPO collapses (base 3.50 → GRPO 0.0)';
  const v = ev.exp('vanilla-rl');
  if (!v || !ev.exp('base-model')) return { id: 'F1', claim, verdict: 'not testable',
    evidence: 'no vanilla-rl or base-model runs' };
  const dv = ev.diff(v, 'base-model');
  const higher = sweepExperiments(ev.store).filter((e) => (e.spec.sweepLr ?? 0) > (v.spec.sweepLr ?? 0));
  const sweep = sweepExperiments(ev.store).filter((e) => e !== v)
    .map((e) => `lr ${formatLr(e.spec.sweepLr)}: ID ${pct(ev.score(e))}, ${collapseText(ev, e)}`).join('; ');
  const evidence =
    `vanilla RL ${pct(ev.score(v))} vs base ${pct(ev.score(ev.exp('base-model')))}, ${d(dv)}; ${collapseText(ev, v)}` +
    (sweep ? `. ${sweep}` : '');
  if (ev.collapsed(v)) return { id: 'F1', claim, verdict: 'reproduced', evidence };
  if (higher.some((e) => ev.collapsed(e))) return { id: 'F1', claim, verdict: 'partly',
    evidence: `at higher learning rates only: ${evidence}` };
  if (above(dv)) return { id: 'F1', claim, verdict: 'inverted', evidence };
  return { id: 'F1', claim, verdict: 'not shown', evidence };
}

/**
 * F2 is about the paper's collapse, so it is judged on the paper's two marks in each collapsed vanilla run: the
 * message signature (at least SIGNATURE_SHARE of the late messages a bare `<tool_call>`) and the probe's spike
 * (p(`<|im_end|>`) or p(`<tool_call>`) >= SPIKE_LEVEL at some RL step). Reproduced: both in most runs; partly: one
 * of them in most runs; not shown: neither. The run's own dominant mode and the token that took the mass from `{"`
 * are listed beside it, so a collapse of another kind is named rather than counted.
 */
function f2(ev: Evidence): Finding {
  const claim =
    `A control-token spike after <tool_call>\\n marks the collapse: p(<|im_end|>) or p(<tool_call>) rises (87% of ` +
    `the RL model's messages a bare <tool_call>)`;
  const runs = ev.collapsedVanilla();
  if (!runs.length) return { id: 'F2', claim, verdict: 'not testable', evidence: 'no vanilla GRPO run collapsed' };
  const spiked = runs.filter(({ seed }) =>
    Math.max(probeExtreme(seed.metrics, 'pImEnd', 'max') ?? 0,
      probeExtreme(seed.metrics, 'pToolCall', 'max') ?? 0) >= SPIKE_LEVEL);
  const measured = runs.filter((r) => r.anatomy.modes !== null);
  const signed = measured.filter((r) => (r.anatomy.modes?.emptyCall ?? 0) >= SIGNATURE_SHARE);
  const most = (k: number) => k * 2 > runs.length;
  const verdict: Verdict = most(signed.length) && most(spiked.length) ? 'reproduced'
    : most(signed.length) || most(spiked.length) ? 'partly' : 'not shown';
  const modes = runs.map((r) => `${runName(r)}: ${r.anatomy.dominant ? MODE_LABEL[r.anatomy.dominant] : 'no sample'} ` +
    `${pct(r.anatomy.modes && r.anatomy.dominant ? r.anatomy.modes[r.anatomy.dominant] : null)}, bare <tool_call> ` +
    `${pct(r.anatomy.modes?.emptyCall)}, mass from {" to ` +
      `${r.anatomy.mass ? JSON.stringify(r.anatomy.mass.token) : 'none'}`);
  const evidence =
    `the paper's signature (≥ ${100 * SIGNATURE_SHARE}% of late messages a bare <tool_call>) ` +
    `in ${signed.length} of ` +
    `${runs.length} collapsed vanilla runs${measured.length < runs.length ? ` (${runs.length -
      measured.length} without a rollout sample)` : ''}; ` +
    `p(<|im_end|>) or p(<tool_call>) ≥ ${SPIKE_LEVEL} at some RL step in ${spiked.length} of ${runs.length}. ` +
    `The collapse the lab has instead (dominant late mode): ${modes.join('; ')}`;
  return { id: 'F2', claim, verdict, evidence };
}

/**
 * F3: does the skill survive in another call format after the collapse? Read on the first of format+content-OOD
 * and format-OOD where the base scores above 0: reproduced when the collapsed vanilla runs keep at least KEPT_SHARE of
 * the base's score there; inverted when they are below the base (the skill is lost in the other format too); not
 * shown otherwise. Constrained decoding on ID (the two control tokens forbidden after `<tool_call>\n`) is reported.
 */
function f3(ev: Evidence): Finding {
  const claim =
    'The capability is intact, hidden by the format: collapsed GRPO keeps 24.75 on ACEBench\'s own call format ' +
    '(base 26.0) while scoring 0 in its own';
  const runs = ev.collapsedVanilla();
  if (!runs.length) return { id: 'F3', claim, verdict: 'not testable', evidence: 'no vanilla GRPO run collapsed' };
  const base = ev.exp('base-model');
  const constrained = runs.map(({ seed }) => {
    const [a, c] = [idAverage(seed.summary), idAverage(seed.summary, 'id_constrained')];
    return a === undefined || c === undefined ? null : c - a;
  }).filter((x): x is number => x !== null);
  const tail = constrained.length ? `; constrained − free decoding on ID: ${constrained.map((x) => `${x >= 0 ?
    '+' : ''}${(100 * x).toFixed(1)}`).join(', ')} points` : '';
  for (const split of ['format_content_ood', 'format_ood'] as Split[]) {
    const b = ev.score(base, split);
    const seeds = runs.map((r) => r.seed);
    const kept = meanOf(seeds, split);
    if (b === null || kept === null || b === 0) continue;
    const oc = seedOutcomes(seeds, split);
    const ob = ev.outcomes(base, split);
    const iv = oc && ob ? differenceInterval(oc, ob, CATS[split]) : null;
    const verdict: Verdict = kept >= KEPT_SHARE * b ? 'reproduced' : below(iv) ? 'inverted' : 'not shown';
    return { id: 'F3', claim, verdict,
      evidence: `${runs.length} collapsed vanilla runs on ${SPLIT_NAME[split]}: ${pct(kept)} vs base ` +
      `${pct(b)}, collapsed − base ${d(iv)} (kept ${pct(kept / b)} of the base's score; reproduced from ` +
        `${100 * KEPT_SHARE}%)${tail}` };
  }
  return { id: 'F3', claim, verdict: 'not testable',
    evidence: `the base scores 0 on both format-OOD splits, nothing to keep${tail}` };
}

/**
 * F4's central contrast is synchronous against interleaved at the same rate: every pair (interleaved ETS / PRS −
 * synchronous OPS / HBG) on ID. Reproduced: every pair above 0; inverted: more pairs below than above; partly: more
 * above than below; not shown: as many (or none decided). Which methods collapsed is the evidence beside it.
 */
function f4(ev: Evidence): Finding {
  const claim =
    'Synchronous mixing collapses like GRPO (OPS 1.50, HBG 0.0); interleaved SFT does not (ETS 20.0, PRS 25.75)';
  let names = { ops: 'ops', hbg: 'hbg', ets: 'ets-difflr', prs: 'prs' };
  let where = 'at the main rate';
  const v = ev.exp('vanilla-rl');
  if (!ev.collapsed(v)) {
    const tag = `-lr${COLLAPSE_LR.toExponential(0).replace('+', '')}`;
    if (!ev.exp('ops' + tag)) {
      return { id: 'F4', claim, verdict: 'not testable',
        evidence: `vanilla GRPO does not collapse at the main rate (${collapseText(ev, v)}) and the store has no ` +
          `signals at a collapse rate` };
    }
    names = { ops: 'ops' + tag, hbg: 'hbg' + tag, ets: 'ets-difflr' + tag, prs: 'prs' + tag };
    where = `at lr ${formatLr(COLLAPSE_LR)}, where vanilla GRPO collapses (it holds at the main rate)`;
  }
  const sync = [names.ops, names.hbg].filter((n) => ev.exp(n));
  const inter = [names.ets, names.prs].filter((n) => ev.exp(n));
  if (!sync.length || !inter.length) return { id: 'F4', claim, verdict: 'not testable',
    evidence: `${where}: missing runs` };
  const pairs = inter.flatMap((i) => sync.map((s) => [i, s] as [string, string]));
  const cmp = compare(ev, pairs);
  const verdictOf = (ivs: (Interval | null)[]): Verdict => {
    const [up, down] = [ivs.filter(above).length, ivs.filter(below).length];
    return up === ivs.length ? 'reproduced' : down > up ? 'inverted' : up > down ? 'partly' : 'not shown';
  };
  const verdict = verdictOf(cmp.map((c) => c.iv));
  const status =
    [...sync,
    ...inter].map((n) => `${ev.exp(n)!.spec.label}: ${collapseText(ev, ev.exp(n))}, ID ${pct(ev.score(ev.exp(n)))}`);
  return { id: 'F4', claim, verdict,
    evidence: `${where}, interleaved − synchronous on ID: ${cmp.map((c) => `${c.name} ${d(c.iv)}`).join('; ')} ` +
    `(${bonferroniNote(cmp.length, verdict, verdictOf(cmp.map((c) => c.strict)))}). ${status.join('; ')}` };
}

/** Wins and losses of `cmp` as a verdict: every one a win is reproduced; losses >= wins (one at least) inverted. */
function winsVerdict(ivs: (Interval | null)[]): Verdict {
  const [wins, losses] = [ivs.filter(above).length, ivs.filter(below).length];
  return wins === ivs.length ? 'reproduced' : wins + losses === 0 ? 'not shown' : losses >= wins ?
    'inverted' : 'partly';
}

/**
 * F5: ETS and PRS above every rival the paper ranks them over (vanilla GRPO, the synchronous signals OPS, HBG and
 * the per-update SFT loss, and the base). Reproduced only when every comparison is above 0; inverted when they lose
 * at least as many as they win; partly when they win more than they lose.
 */
function f5(ev: Evidence): Finding {
  const claim =
    'ETS (20.0) and PRS (25.75) are best: above vanilla GRPO (0.0), the synchronous signals (OPS 1.50, HBG 0.0) and ' +
    'the base (3.50); SFT→RL 17.25';
  const methods = ['ets-difflr', 'prs'].filter((n) => ev.exp(n));
  const rivals = ['vanilla-rl', 'ops', 'hbg', 'sync-sft', 'base-model'].filter((n) => ev.exp(n));
  if (!methods.length || !rivals.length) return { id: 'F5', claim, verdict: 'not testable', evidence: 'missing runs' };
  const cmp = compare(ev, methods.flatMap((m) => rivals.map((r) => [m, r] as [string, string])));
  const verdict = winsVerdict(cmp.map((c) => c.iv));
  const [wins, losses] = [cmp.filter((c) => above(c.iv)).length, cmp.filter((c) => below(c.iv)).length];
  const lines = methods.map((m, mi) => `${ev.exp(m)!.spec.label} ${pct(ev.score(ev.exp(m)))}: ` +
    rivals.map((r, ri) => `− ${ev.exp(r)!.spec.label} ${d(cmp[mi * rivals.length + ri].iv)}`).join(', '));
  const sftRl = ['fcl-sft-rl', 'ace-sft-rl'].filter((n) => ev.exp(n))
    .map((n) => `${ev.exp(n)!.spec.label} ${pct(ev.score(ev.exp(n)))} (− base ${d(ev.diff(n, 'base-model'))})`);
  return { id: 'F5', claim, verdict,
    evidence: `above in ${wins}, below in ${losses} of ${cmp.length} comparisons (${bonferroniNote(cmp.length, verdict,
      winsVerdict(cmp.map((c) => c.strict)))}): ${lines.join('; ')}${sftRl.length ? `. ${sftRl.join('; ')}` : ''}` };
}

/**
 * F6: supervised training binds the training format while GRPO keeps the other one. On the first format-OOD split
 * where the base scores above 0: reproduced when every supervised row (FCL-SFT, ETS, PRS) is below the base AND
 * below vanilla RL; inverted when most supervised rows are above vanilla RL (they keep the other format better than
 * GRPO); partly when some row is below the base or vanilla RL; not shown otherwise.
 */
function f6(ev: Evidence): Finding {
  const claim =
    'Supervised training binds the training format: format+content-OOD SFT(BFCL) 0.0, ETS 8.75, PRS 12.0 vs base ' +
    '26.0 (GRPO 24.75)';
  const methods = ['fcl-sft', 'ets-difflr', 'prs'].filter((n) => ev.exp(n));
  const base = ev.exp('base-model');
  const vr = ev.exp('vanilla-rl');
  if (!methods.length || !base || !vr) return { id: 'F6', claim, verdict: 'not testable', evidence: 'missing runs' };
  for (const split of ['format_content_ood', 'format_ood'] as Split[]) {
    const b = ev.score(base, split);
    if (b === null || b === 0) continue; // nothing to lose on this split
    const cmp = compare(ev, [...methods.map((m) => [m, 'base-model'] as [string, string]),
      ...methods.map((m) => [m, 'vanilla-rl'] as [string, string])], split);
    const verdictOf = (ivs: (Interval | null)[]): Verdict => {
      const [vsBase, vsRl] = [ivs.slice(0, methods.length), ivs.slice(methods.length)];
      const [lostBase, lostRl, keptRl] = [vsBase.filter(below).length, vsRl.filter(below).length,
        vsRl.filter(above).length];
      return lostBase === methods.length && lostRl === methods.length ? 'reproduced' : keptRl * 2 > methods.length ?
        'inverted'
        : lostBase + lostRl > 0 ? 'partly' : 'not shown';
    };
    const verdict = verdictOf(cmp.map((c) => c.iv));
    const rows =
      methods.map((m, i) => `${ev.exp(m)!.spec.label} ${pct(ev.score(ev.exp(m), split))} (− base ${d(cmp[i].iv)}, ` +
      `− vanilla RL ${d(cmp[methods.length + i].iv)})`);
    return { id: 'F6', claim, verdict,
      evidence: `${SPLIT_NAME[split]} (base ${pct(b)}; vanilla RL ${pct(ev.score(vr, split))}, − base ` +
      `${d(ev.diff(vr, base, split))}): ${rows.join(', ')} ` +
        `(${bonferroniNote(cmp.length, verdict, verdictOf(cmp.map((c) => c.strict)))})` +
      (split === 'format_ood' ? '; format+content-OOD: the base scores 0 there' : '') };
  }
  return { id: 'F6', claim, verdict: 'not testable', evidence: 'the base scores 0 on both format-OOD splits' };
}

/**
 * F7 has two halves, both needed: GRPO ends lower at the sweep's highest rate than at its lowest (lowest − highest
 * above 0), and ETS gains more with the higher SFT rate (ets-difflr − ets above 0; paper +2.75). Reproduced: both
 * above; partly: one above; inverted: one below and none above; not shown: neither decided.
 */
function f7(ev: Evidence): Finding {
  const claim =
    'The learning rate modulates the outcome (GRPO collapses faster at higher rates; ETS +16.5 at SFT lr 1e-5 vs ' +
    '+13.75 at 1e-6)';
  const sweep = sweepExperiments(ev.store);
  if (sweep.length < 2) return { id: 'F7', claim, verdict: 'not testable', evidence: 'no learning-rate sweep' };
  const [lo, hi] = [sweep[0], sweep[sweep.length - 1]];
  const pairs: [string, string][] = [[lo.spec.name, hi.spec.name],
    ...(ev.exp('ets-difflr') && ev.exp('ets') ? [['ets-difflr', 'ets'] as [string, string]] : [])];
  const cmp = compare(ev, pairs);
  const verdictOf = (ivs: (Interval | null)[]): Verdict => {
    const [up, down] = [ivs.filter(above).length, ivs.filter(below).length];
    return up === 2 ? 'reproduced' : up === 1 ? 'partly' : down > 0 ? 'inverted' : 'not shown';
  };
  const verdict = verdictOf(cmp.map((c) => c.iv));
  const paperEts = (PAPER_ROWS['ets-difflr'].average! - PAPER_ROWS.ets.average!).toFixed(2);
  const evidence = sweep.map((e) => `lr ${formatLr(e.spec.sweepLr)} ${pct(ev.score(e))}`).join(', ') +
    `; GRPO lr ${formatLr(lo.spec.sweepLr)} − lr ${formatLr(hi.spec.sweepLr)} ${d(cmp[0].iv)}` +
    (cmp[1] ?
      `; ETS SFT lr high − low ${d(cmp[1].iv)} (paper +${paperEts} points)`
      : '; ETS at two SFT rates: missing runs') +
    ` (${bonferroniNote(cmp.length, verdict, verdictOf(cmp.map((c) => c.strict)))})`;
  return { id: 'F7', claim, verdict, evidence };
}

/** The seven findings for one store. */
export function findings(store: ResultsStore): Finding[] {
  const ev = new Evidence(store);
  return [f1, f2, f3, f4, f5, f6, f7].map((rule) => {
    ev.compared.clear();
    return markPreliminary(ev, rule(ev));
  });
}

/**
 * A verdict on rows that still lack seeds is a pilot's, not the study's: the interval then spans fewer seeds than
 * the others' and can move when the rest land. Such a finding names the short rows and reads "(preliminary)".
 */
function markPreliminary(ev: Evidence, f: Finding): Finding {
  const n = ev.studySeeds;
  if (f.verdict === 'not testable' || n === null) return f;
  const short = [...ev.compared].filter((e) => e.seeds.length < n);
  if (!short.length) return f;
  const preliminary = short.map((e) => `${e.spec.label}: ${e.seeds.length} of ${n}`).join('; ');
  return { ...f, preliminary, evidence: `Preliminary, rows with fewer seeds than the study's (${preliminary}). ` +
    f.evidence };
}

/** One table, a column pair per store: "regime label" -> store. */
export function findingsTable(stores: { label: string; store: ResultsStore }[]): ReportTable {
  const per = stores.map((s) => findings(s.store));
  const columns = ['#', 'the paper\'s claim (Qwen2.5-1.5B-Instruct)',
    ...stores.flatMap((s) => [s.label, `${s.label}: evidence`])];
  const rows = per[0].map((f, i) => [f.id, f.claim, ...per.flatMap((p) => [verdictLabel(p[i]), p[i].evidence])]);
  return {
    id: 'table-findings', title: 'Findings F1-F7 against the paper, per regime', columns, rows,
    raw: per[0].map((f, i) => ({ config: f.id, label: f.claim, seeds: [],
      values: Object.fromEntries(stores.map((s, j) => [s.label, per[j][i].verdict])) })),
    notes: ['Verdicts by fixed rules (lib/report/tables/findings.ts): reproduced / partly / inverted / not shown / ' +
      'not testable; "(preliminary)" while a row the rule compares has fewer seeds than the study runs (the ' +
      'evidence names it); differences are paired bootstrap intervals over the test tasks and seeds (95%), percent ' +
      'points.'],
  };
}
