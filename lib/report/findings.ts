/**
 * The paper's seven findings, judged per regime from the results store by fixed rules (written before the
 * instruct regime's runs existed; never tuned to a result). Each verdict is one of
 *   reproduced    the data show what the paper reports
 *   partly        some of the methods or conditions do, others do not
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
 *                   interval above / below 0.
 * Rows are Table 1's, at the main learning rate. Where vanilla GRPO does not collapse at the main rate, F4 (which
 * needs an instability) reads the 'collapse-rate' group, the same signals at the rate where it does, if the
 * store has it, and says so.
 */
import { ExperimentResults, ResultsStore } from './results';
import { ReportTable, ID_COLUMNS, baseValAccuracy, collapseVsStart, idAverage, probeExtreme, sweepExperiments } from './tables';
import { Interval, Outcomes, differenceInterval, formatInterval } from './bootstrap';
import { formatLr } from './stats';
import { COLLAPSE_LR } from '../experiments/configs';
import { PAPER_ROWS } from './paper';

export type Verdict = 'reproduced' | 'partly' | 'inverted' | 'not shown' | 'not testable';

export interface Finding {
  id: string;
  /** The paper's claim, with its numbers. */
  claim: string;
  verdict: Verdict;
  evidence: string;
}

type Split = 'id' | 'format_ood' | 'content_ood' | 'format_content_ood';
const OOD_CATS = ['base', 'miss_param', 'miss_func'];
const CATS: Record<Split, string[]> = { id: ID_COLUMNS, format_ood: OOD_CATS, content_ood: OOD_CATS, format_content_ood: OOD_CATS };

/** A probe probability counts as a control-token spike from here (the paper: 87% of messages a bare tag). */
export const SPIKE_LEVEL = 0.5;
/** A capability survives in another format when the collapsed runs keep at least this share of the base's score there. */
const KEPT_SHARE = 0.5;

/** What the rules read from one store. */
class Evidence {
  readonly start: number | null;
  constructor(readonly store: ResultsStore) {
    this.start = baseValAccuracy(store);
  }

  exp(name: string): ExperimentResults | undefined {
    return this.store.experiments.find((e) => e.spec.name === name);
  }

  outcomes(e: ExperimentResults | undefined, split: Split): Outcomes[] | null {
    if (!e) return null;
    const o = e.seeds.map((s) => s.summary.eval[split]?.outcomes).filter((x): x is Outcomes => x !== undefined);
    return o.length === e.seeds.length && o.length > 0 ? o : null;
  }

  /** a − b on `split`, paired over the test tasks; null when either is missing. */
  diff(a: string | ExperimentResults | undefined, b: string | ExperimentResults | undefined, split: Split = 'id'): Interval | null {
    const [ea, eb] = [typeof a === 'string' ? this.exp(a) : a, typeof b === 'string' ? this.exp(b) : b];
    const [oa, ob] = [this.outcomes(ea, split), this.outcomes(eb, split)];
    return oa && ob ? differenceInterval(oa, ob, CATS[split]) : null;
  }

  /** Mean over seeds of a split's average (ID: of the four categories). */
  score(e: ExperimentResults | undefined, split: Split = 'id'): number | null {
    if (!e) return null;
    const v = e.seeds.map((s) => (split === 'id' ? idAverage(s.summary) : s.summary.eval[split]?.mean)).filter((x): x is number => x !== undefined);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  }

  /** Collapse steps per seed (null: held). */
  collapses(e: ExperimentResults | undefined): (number | null)[] {
    return e ? e.seeds.map((s) => collapseVsStart(s, e, this.start)) : [];
  }

  collapsed(e: ExperimentResults | undefined): boolean {
    const c = this.collapses(e);
    return c.length > 0 && c.filter((x) => x !== null).length * 2 > c.length;
  }
}

const above = (iv: Interval | null) => iv !== null && iv.lo > 0;
const below = (iv: Interval | null) => iv !== null && iv.hi < 0;
const pct = (x: number | null) => (x === null ? '—' : `${(100 * x).toFixed(1)}%`);
const d = (iv: Interval | null) => (iv ? formatInterval(iv, 1, true) : '—');
function collapseText(ev: Evidence, e: ExperimentResults | undefined): string {
  const c = ev.collapses(e);
  const n = c.filter((x) => x !== null).length;
  return `collapsed in ${n} of ${c.length} seeds${n ? ` (steps ${c.map((x) => x ?? '—').join(', ')})` : ''}`;
}

function f1(ev: Evidence): Finding {
  const claim = 'Vanilla multi-turn GRPO collapses (base 3.50 → GRPO 0.0)';
  const v = ev.exp('vanilla-rl');
  if (!v || !ev.exp('base-model')) return { id: 'F1', claim, verdict: 'not testable', evidence: 'no vanilla-rl or base-model runs' };
  const dv = ev.diff(v, 'base-model');
  const higher = sweepExperiments(ev.store).filter((e) => (e.spec.sweepLr ?? 0) > (v.spec.sweepLr ?? 0));
  const sweep = sweepExperiments(ev.store).filter((e) => e !== v)
    .map((e) => `lr ${formatLr(e.spec.sweepLr)}: ID ${pct(ev.score(e))}, ${collapseText(ev, e)}`).join('; ');
  const evidence = `vanilla RL ${pct(ev.score(v))} vs base ${pct(ev.score(ev.exp('base-model')))}, ${d(dv)}; ${collapseText(ev, v)}` +
    (sweep ? `. ${sweep}` : '');
  if (ev.collapsed(v)) return { id: 'F1', claim, verdict: 'reproduced', evidence };
  if (higher.some((e) => ev.collapsed(e))) return { id: 'F1', claim, verdict: 'partly', evidence: `at higher learning rates only: ${evidence}` };
  if (above(dv)) return { id: 'F1', claim, verdict: 'inverted', evidence };
  return { id: 'F1', claim, verdict: 'not shown', evidence };
}

/** Vanilla GRPO runs at any rate, the ones that collapsed. */
function collapsedVanilla(ev: Evidence): { e: ExperimentResults; seed: ExperimentResults['seeds'][number] }[] {
  const out: { e: ExperimentResults; seed: ExperimentResults['seeds'][number] }[] = [];
  for (const e of sweepExperiments(ev.store).length ? sweepExperiments(ev.store) : [ev.exp('vanilla-rl')].filter((x): x is ExperimentResults => !!x)) {
    e.seeds.forEach((s) => { if (collapseVsStart(s, e, ev.start) !== null) out.push({ e, seed: s }); });
  }
  return out;
}

function f2(ev: Evidence): Finding {
  const claim = `A control-token spike after <tool_call>\\n marks the collapse: p(<|im_end|>) or p(<tool_call>) rises (87% of the RL model's messages a bare <tool_call>)`;
  const runs = collapsedVanilla(ev);
  if (!runs.length) return { id: 'F2', claim, verdict: 'not testable', evidence: 'no vanilla GRPO run collapsed' };
  const spiked = runs.filter(({ seed }) => Math.max(probeExtreme(seed.metrics, 'pImEnd', 'max') ?? 0, probeExtreme(seed.metrics, 'pToolCall', 'max') ?? 0) >= SPIKE_LEVEL);
  const collapseShare = runs.map(({ seed }) => seed.summary.rl?.finalStates.fullCollapse ?? 0);
  const evidence = `${spiked.length} of ${runs.length} collapsed vanilla runs had p(<|im_end|>) or p(<tool_call>) ≥ ${SPIKE_LEVEL} at some RL step; ` +
    `full-collapse share of their last sampled messages ${collapseShare.map((x) => pct(x)).join(', ')}`;
  const verdict: Verdict = spiked.length * 2 > runs.length ? 'reproduced' : spiked.length ? 'partly' : 'not shown';
  return { id: 'F2', claim, verdict, evidence };
}

function f3(ev: Evidence): Finding {
  const claim = 'The capability is intact, hidden by the format: collapsed GRPO keeps 24.75 on ACEBench\'s own call format (base 26.0) while scoring 0 in its own';
  const runs = collapsedVanilla(ev);
  if (!runs.length) return { id: 'F3', claim, verdict: 'not testable', evidence: 'no vanilla GRPO run collapsed' };
  const base = ev.exp('base-model');
  const parts: string[] = [];
  let verdict: Verdict = 'not testable';
  for (const split of ['format_content_ood', 'format_ood'] as Split[]) {
    const b = ev.score(base, split);
    const kept = runs.map(({ seed }) => seed.summary.eval[split]?.mean).filter((x): x is number => x !== undefined);
    const name = split === 'format_ood' ? 'format-OOD' : 'format+content-OOD';
    if (b === null || !kept.length) { parts.push(`${name}: not measured`); continue; }
    if (b === 0) { parts.push(`${name}: the base scores 0, nothing to keep`); continue; }
    const m = kept.reduce((a, x) => a + x, 0) / kept.length;
    parts.push(`${name}: collapsed runs ${pct(m)} vs base ${pct(b)}`);
    if (verdict === 'not testable') verdict = m >= KEPT_SHARE * b ? 'reproduced' : 'not shown';
  }
  const constrained = runs.map(({ seed }) => {
    const [a, c] = [idAverage(seed.summary), idAverage(seed.summary, 'id_constrained')];
    return a === undefined || c === undefined ? null : c - a;
  }).filter((x): x is number => x !== null);
  if (constrained.length) parts.push(`constrained − free decoding on ID: ${constrained.map((x) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}`).join(', ')} points`);
  return { id: 'F3', claim, verdict, evidence: `${runs.length} collapsed vanilla runs; ${parts.join('; ')}` };
}

function f4(ev: Evidence): Finding {
  const claim = 'Synchronous mixing collapses like GRPO (OPS 1.50, HBG 0.0); interleaved SFT does not (ETS 20.0, PRS 25.75)';
  let names = { ops: 'ops', hbg: 'hbg', ets: 'ets-difflr', prs: 'prs' };
  let where = 'at the main rate';
  const v = ev.exp('vanilla-rl');
  if (!ev.collapsed(v)) {
    const tag = `-lr${COLLAPSE_LR.toExponential(0).replace('+', '')}`;
    if (!ev.exp('ops' + tag)) return { id: 'F4', claim, verdict: 'not testable', evidence: `vanilla GRPO does not collapse at the main rate (${collapseText(ev, v)}) and the store has no signals at a collapse rate` };
    names = { ops: 'ops' + tag, hbg: 'hbg' + tag, ets: 'ets-difflr' + tag, prs: 'prs' + tag };
    where = `at lr ${formatLr(COLLAPSE_LR)}, where vanilla GRPO collapses (it holds at the main rate)`;
  }
  const held = (n: string) => !ev.collapsed(ev.exp(n));
  const got = (['ops', 'hbg', 'ets', 'prs'] as const).map((k) => `${ev.exp(names[k])?.spec.label ?? k}: ${collapseText(ev, ev.exp(names[k]))}, ID ${pct(ev.score(ev.exp(names[k])))}`);
  const sync = [names.ops, names.hbg].filter((n) => ev.exp(n));
  const inter = [names.ets, names.prs].filter((n) => ev.exp(n));
  if (!sync.length || !inter.length) return { id: 'F4', claim, verdict: 'not testable', evidence: 'missing runs' };
  const agree = [...sync.filter((n) => !held(n)), ...inter.filter(held)];
  const label = (n: string) => ev.exp(n)!.spec.label;
  const all = [...sync, ...inter];
  const verdict: Verdict = agree.length === all.length ? 'reproduced' : agree.length === 0 ? 'inverted' : 'partly';
  const tally = `as in the paper: ${agree.map(label).join(', ') || 'none'}; the opposite: ${all.filter((n) => !agree.includes(n)).map(label).join(', ') || 'none'}`;
  return { id: 'F4', claim, verdict, evidence: `${where}: ${got.join('; ')} (${tally})` };
}

function f5(ev: Evidence): Finding {
  const claim = 'ETS (20.0) and PRS (25.75) are best: above vanilla GRPO (0.0), the synchronous signals (OPS 1.50, HBG 0.0) and the base (3.50); SFT→RL 17.25';
  const methods = ['ets-difflr', 'prs'].filter((n) => ev.exp(n));
  const rivals = ['vanilla-rl', 'ops', 'hbg', 'base-model'].filter((n) => ev.exp(n));
  if (!methods.length || !rivals.length) return { id: 'F5', claim, verdict: 'not testable', evidence: 'missing runs' };
  let wins = 0, losses = 0, pairs = 0;
  const lines = methods.map((m) => {
    const cells = rivals.map((r) => {
      const iv = ev.diff(m, r);
      pairs++;
      if (above(iv)) wins++;
      if (below(iv)) losses++;
      return `− ${ev.exp(r)!.spec.label} ${d(iv)}`;
    });
    return `${ev.exp(m)!.spec.label} ${pct(ev.score(ev.exp(m)))}: ${cells.join(', ')}`;
  });
  const sftRl = ['fcl-sft-rl', 'ace-sft-rl'].filter((n) => ev.exp(n))
    .map((n) => `${ev.exp(n)!.spec.label} ${pct(ev.score(ev.exp(n)))} (− base ${d(ev.diff(n, 'base-model'))})`);
  // every comparison above: reproduced; more above than below: partly; more below: inverted; none decided: not shown
  const verdict: Verdict = wins === pairs ? 'reproduced' : wins + losses === 0 ? 'not shown' : wins >= losses ? 'partly' : 'inverted';
  return { id: 'F5', claim, verdict,
    evidence: `above in ${wins}, below in ${losses} of ${pairs} comparisons: ${lines.join('; ')}${sftRl.length ? `. ${sftRl.join('; ')}` : ''}` };
}

function f6(ev: Evidence): Finding {
  const claim = 'Supervised training binds the training format: format+content-OOD SFT(BFCL) 0.0, ETS 8.75, PRS 12.0 vs base 26.0 (GRPO 24.75)';
  const methods = ['fcl-sft', 'ets-difflr', 'prs'].filter((n) => ev.exp(n));
  const base = ev.exp('base-model');
  if (!methods.length || !base) return { id: 'F6', claim, verdict: 'not testable', evidence: 'missing runs' };
  for (const split of ['format_content_ood', 'format_ood'] as Split[]) {
    const b = ev.score(base, split);
    if (b === null || b === 0) continue; // nothing to lose on this split
    const ivs = methods.map((m) => ev.diff(m, base, split));
    const name = split === 'format_ood' ? 'format-OOD' : 'format+content-OOD';
    const lost = ivs.filter(below).length;
    const gained = ivs.filter(above).length;
    const vr = ev.exp('vanilla-rl');
    const evidence = `${name} (base ${pct(b)}): ` + methods.map((m, i) => `${ev.exp(m)!.spec.label} ${pct(ev.score(ev.exp(m), split))} (${d(ivs[i])})`).join(', ') +
      (vr ? `; vanilla RL ${pct(ev.score(vr, split))} (${d(ev.diff(vr, base, split))})` : '') +
      (split === 'format_ood' ? '; format+content-OOD: the base scores 0 there' : '');
    const verdict: Verdict = lost === methods.length ? 'reproduced' : lost > 0 ? 'partly' : gained === methods.length ? 'inverted' : 'not shown';
    return { id: 'F6', claim, verdict, evidence };
  }
  return { id: 'F6', claim, verdict: 'not testable', evidence: 'the base scores 0 on both format-OOD splits' };
}

function f7(ev: Evidence): Finding {
  const claim = 'The learning rate modulates the outcome (GRPO collapses faster at higher rates; ETS +16.5 at SFT lr 1e-5 vs +13.75 at 1e-6)';
  const sweep = sweepExperiments(ev.store);
  if (sweep.length < 2) return { id: 'F7', claim, verdict: 'not testable', evidence: 'no learning-rate sweep' };
  const [lo, hi] = [sweep[0], sweep[sweep.length - 1]];
  const iv = ev.diff(lo, hi);
  const ets = ev.diff('ets-difflr', 'ets');
  const evidence = sweep.map((e) => `lr ${formatLr(e.spec.sweepLr)} ${pct(ev.score(e))}`).join(', ') +
    `; lr ${formatLr(lo.spec.sweepLr)} − lr ${formatLr(hi.spec.sweepLr)} ${d(iv)}` +
    (ets ? `; ETS SFT lr high − low ${d(ets)} (paper ${((PAPER_ROWS['ets-difflr'].average! - PAPER_ROWS.ets.average!)).toFixed(2)} points)` : '');
  const verdict: Verdict = above(iv) ? 'reproduced' : below(iv) ? 'inverted' : 'not shown';
  return { id: 'F7', claim, verdict, evidence };
}

/** The seven findings for one store. */
export function findings(store: ResultsStore): Finding[] {
  const ev = new Evidence(store);
  return [f1(ev), f2(ev), f3(ev), f4(ev), f5(ev), f6(ev), f7(ev)];
}

/** One table, a column pair per store: "regime label" -> store. */
export function findingsTable(stores: { label: string; store: ResultsStore }[]): ReportTable {
  const per = stores.map((s) => findings(s.store));
  const columns = ['#', 'the paper\'s claim (Qwen2.5-1.5B-Instruct)', ...stores.flatMap((s) => [s.label, `${s.label}: evidence`])];
  const rows = per[0].map((f, i) => [f.id, f.claim, ...per.flatMap((p) => [p[i].verdict, p[i].evidence])]);
  return {
    id: 'table-findings', title: 'Findings F1-F7 against the paper, per regime', columns, rows,
    raw: per[0].map((f, i) => ({ config: f.id, label: f.claim, seeds: [],
      values: Object.fromEntries(stores.map((s, j) => [s.label, per[j][i].verdict])) })),
    notes: ['Verdicts by fixed rules (lib/report/findings.ts): reproduced / partly / inverted / not shown / not testable; ' +
      'differences are paired bootstrap intervals over the test tasks and seeds (95%), percent points.'],
  };
}
