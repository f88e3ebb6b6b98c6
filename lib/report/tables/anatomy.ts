/**
 * The anatomy of a collapse: what a run's policy writes once it has collapsed, where the probe's mass went, and
 * whether the probe moved before the sampled reward fell (docs/design.md A.5). Everything comes from committed
 * files: the late messages of rollouts-sample.jsonl (samples.ts), classified with the current rule
 * (lib/format/states.ts messageMode), and the probe fields of metrics.jsonl.
 *
 * Definitions (one place, so every table and finding reads the same):
 *   late messages   samples.ts: the sampled (never OPS's scripted) messages of the last third of the RL steps;
 *   dominant mode   the mode with the largest share of the late messages;
 *   mass taker      at the RL step where the probe's p(`{"`) after `<tool_call>\n` is lowest, the most likely of
 *                   `<|im_end|>`, `<tool_call>` and the probe's top other token (any token, special or text); none
 *                   when p(`{"`) never fell below JSON_OPEN_LEVEL;
 *   probe moved     the first RL step with p(`{"`) < JSON_OPEN_LEVEL (a tenth of the mass gone; precursor.ts);
 *   reward halved   the first RL step whose trailing mean sampled reward is below half its start (precursor.ts).
 */
import { MESSAGE_MODES, MODE_LABEL, MessageMode } from '../../format/types';
import { messageMode } from '../../format/states';
import { LOOP_MIN_CHARS, LOOP_SHARE, LOOP_WINDOW, repetitionShare } from '../../format/repetition';
import { GRPOMetric, grpoRecords, stepOf } from '../../train/records';
import { ExperimentResults, ResultsStore, SeedResult } from '../store/results';
import { lateModes, sampledMessages } from '../store/samples';
import { ReportTable, RawRow, baseValAccuracy, collapseVsStart } from './base';
import { JSON_OPEN_LEVEL, firstStep, rewardHalvedAt } from './precursor';

/** The mode with the largest share (the first in MESSAGE_MODES order on a tie). */
export function dominantMode(shares: Record<MessageMode, number>): MessageMode {
  return MESSAGE_MODES.reduce((best, m) => (shares[m] > shares[best] ? m : best), MESSAGE_MODES[0]);
}

export interface MassTaker {
  /** RL record's global step where p(`{"`) was lowest, and that p. */
  step: number;
  pJsonOpen: number;
  token: string;
  p: number;
}

/** Where the mass leaving `{"` went (the file comment), or null when p(`{"`) never fell below JSON_OPEN_LEVEL. */
export function massTaker(g: GRPOMetric[]): MassTaker | null {
  let low: GRPOMetric | null = null;
  for (const r of g) if (low === null || r.pJsonOpen < low.pJsonOpen) low = r;
  if (low === null || !(low.pJsonOpen < JSON_OPEN_LEVEL)) return null;
  const candidates = [{ token: '<|im_end|>', p: low.pImEnd }, { token: '<tool_call>', p: low.pToolCall },
    ...(low.probeTopOther !== undefined && low.pTopOther !== undefined ?
    [{ token: low.probeTopOther, p: low.pTopOther }] : [])];
  const top = candidates.reduce((a, b) => (b.p > a.p ? b : a));
  return { step: stepOf(low) ?? low.step, pJsonOpen: low.pJsonOpen, ...top };
}

export type ProbeOrder = 'probe first' | 'reward first' | 'same step' | 'probe never moved' | 'reward never halved';

export interface RunAnatomy {
  config: string;
  label: string;
  seed: number;
  collapseStep: number | null;
  lateFrom: number;
  lateMessages: number;
  /** Late mode shares (null without a rollout sample). */
  modes: Record<MessageMode, number> | null;
  dominant: MessageMode | null;
  mass: MassTaker | null;
  probeMoved: number | null;
  rewardHalved: number | null;
  order: ProbeOrder;
}

function probeOrder(probe: number | null, reward: number | null): ProbeOrder {
  if (probe === null) return 'probe never moved';
  if (reward === null) return 'reward never halved';
  return probe < reward ? 'probe first' : probe > reward ? 'reward first' : 'same step';
}

/** The anatomy of one seed of `e`; `start`: the base's validation accuracy (tables.ts baseValAccuracy). */
export function runAnatomy(e: ExperimentResults, s: SeedResult, start: number | null): RunAnatomy {
  const g = grpoRecords(s.metrics);
  const late = lateModes(s);
  const probeMoved = firstStep(g, (r) => r.pJsonOpen < JSON_OPEN_LEVEL);
  const rewardHalved = rewardHalvedAt(g);
  return {
    config: e.spec.name, label: e.spec.label, seed: s.seed, collapseStep: collapseVsStart(s, e, start),
    lateFrom: late.from, lateMessages: late.n, modes: late.shares,
      dominant: late.shares ? dominantMode(late.shares) : null,
    mass: massTaker(g), probeMoved, rewardHalved, order: probeOrder(probeMoved, rewardHalved),
  };
}

/** The anatomy of every collapsed RL run of the store, in registry order. */
export function collapsedAnatomies(store: ResultsStore): RunAnatomy[] {
  const start = baseValAccuracy(store);
  const out: RunAnatomy[] = [];
  for (const e of store.experiments) {
    for (const s of e.seeds) {
      if (!grpoRecords(s.metrics).length || collapseVsStart(s, e, start) === null) continue;
      out.push(runAnatomy(e, s, start));
    }
  }
  return out;
}

const pct = (x: number | undefined | null) => (x === undefined || x === null ? '—' : `${(100 * x).toFixed(1)}`);

/** "repetition loop 62.0" for the dominant mode with its share. */
export function dominantCell(a: RunAnatomy): string {
  return a.dominant === null || a.modes === null ? '—' : `${MODE_LABEL[a.dominant]} ${pct(a.modes[a.dominant])}`;
}

/** "</tool_call> 0.81 (step 40, p({") 0.12)", or "none: p({") ≥ 0.9 throughout". */
export function massCell(m: MassTaker | null): string {
  return m === null ? `none: p({") ≥ ${JSON_OPEN_LEVEL} throughout`
    : `${JSON.stringify(m.token)} ${m.p.toFixed(2)} (step ${m.step}, p({") ${m.pJsonOpen.toFixed(2)})`;
}

/** The report's table "how each run collapsed": one row per collapsed RL run of the store. */
export function anatomyTable(store: ResultsStore): ReportTable {
  const runs = collapsedAnatomies(store);
  const shown: MessageMode[] = ['emptyCall', 'voidTurn', 'tags', 'loop', 'malformedCall', 'untaggedCall', 'pollution',
    'healthyCall'];
  const columns = ['run', 'collapse step', 'reward halved at', `p({") < ${JSON_OPEN_LEVEL} at`, 'order',
    'mass from {" went to',
    'late messages', 'dominant late mode (%)', ...shown.map((m) => `${MODE_LABEL[m]} (%)`)];
  const step = (x: number | null) => (x === null ? 'never' : String(x));
  const raw: RawRow[] = [];
  const rows = runs.map((a) => {
    const values: RawRow['values'] = { 'collapse step': a.collapseStep, 'reward halved at': a.rewardHalved,
      [columns[3]]: a.probeMoved, order: a.order, 'mass from {" went to': a.mass?.token ?? null,
        'late messages': a.lateMessages,
      'dominant late mode (%)': a.dominant };
    shown.forEach((m, i) => (values[columns[8 + i]] = a.modes?.[m] ?? null));
    raw.push({ config: a.config, label: `${a.label}, seed ${a.seed}`, seeds: [a.seed], values });
    return [`${a.config}, seed ${a.seed}`, step(a.collapseStep), step(a.rewardHalved), step(a.probeMoved), a.order,
      massCell(a.mass),
      String(a.lateMessages), dominantCell(a), ...shown.map((m) => pct(a.modes?.[m]))];
  });
  return {
    id: 'table-anatomy',
      title: 'How each run collapsed: what the collapsed policy writes and where the probe\'s mass went',
    columns, rows, raw,
    notes: rows.length ? [
      `late messages = the sampled messages (rollouts-sample.jsonl: RL step 1 and every 10th, 32 rollouts) of the ` +
        `last third of the ` +
        'run\'s RL steps; modes by the current rule (lib/format/states.ts): empty call = a bare <tool_call> and ' +
          'nothing else ' +
        '(the paper\'s signature: 87% of its vanilla-RL model\'s messages), void turn = an empty message, bare or ' +
          'repeated ' +
        'tags = only tags or a tag 3+ times, repetition loop = half the message one short piece written 3+ times in ' +
          'a row.',
      `mass from {" went to = at the RL step where p({") after <tool_call>\\n was lowest, the most likely of ` +
        `<|im_end|>, <tool_call> ` +
        'and the probe\'s top other token, with its probability.',
      `order: the probe moved (p({") < ${JSON_OPEN_LEVEL}) before or after the sampled reward halved (its trailing ` +
        `mean below ` +
        'half of RL steps 1-5); steps are global steps. collapse step as in the LR table.',
    ] : ['No collapsed RL run in this store.'],
  };
}

/** The bins of the loop-rule table: share of a message in repeats. */
const LOOP_BINS: [number, number][] = [[0, 0.1], [0.1, LOOP_SHARE], [LOOP_SHARE, 0.9], [0.9, 1.01]];

/**
 * Where the loop rule's threshold sits (lib/format/repetition.ts): the repetition share of the sampled messages at RL
 * step 1 (the bases, before any update) against the late messages of the collapsed vanilla runs. Messages that are a
 * healthy call, too short for the rule (under LOOP_MIN_CHARS characters) or control-tag collapse are not counted:
 * the rule never reads them.
 */
export function loopRuleTable(stores: { label: string; store: ResultsStore }[]): ReportTable {
  const columns = ['store', 'messages', 'read by the rule', ...LOOP_BINS.map(([a, b]) =>
    `share in repeats ${a}-${Math.min(b, 1)} (%)`)];
  const rows: string[][] = [];
  const raw: RawRow[] = [];
  for (const { label, store } of stores) {
    const start = baseValAccuracy(store);
    const step1: string[] = [];
    const late: string[] = [];
    for (const e of store.experiments) {
      for (const s of e.seeds) {
        const msgs = sampledMessages(s);
        step1.push(...msgs.filter((m) => m.rlStep === 1).map((m) => m.content));
        if (e.spec.sweepLr !== undefined && collapseVsStart(s, e, start) !== null) {
          const from = lateModes(s).from;
          late.push(...msgs.filter((m) => m.rlStep >= from).map((m) => m.content));
        }
      }
    }
    for (const [what, msgs] of [['RL step 1, every run', step1], ['late, collapsed vanilla runs', late]] as [string,
      string[]][]) {
      const read = msgs.filter((m) => {
        const mode = messageMode(m);
        return mode !== 'healthyCall' && mode !== 'voidTurn' && mode !== 'emptyCall' && mode !== 'tags' &&
          isRepetitionLoopCandidate(m);
      });
      const shares = read.map((m) => repetitionShare(m.slice(0, LOOP_WINDOW)));
      const bins = LOOP_BINS.map(([a, b]) => shares.filter((x) => x >= a && x < b).length / Math.max(1, shares.length));
      rows.push([`${label}: ${what}`, String(msgs.length), String(read.length), ...bins.map((x) => pct(x))]);
      raw.push({ config: what, label, seeds: [], values: Object.fromEntries(columns.slice(3).map((c, i) =>
        [c, bins[i]])) });
    }
  }
  return {
    id: 'table-loop-rule', title: 'The loop rule\'s threshold: how much of each message is repetition', columns, rows,
      raw,
    notes: [`A message is a repetition loop from a share of ${LOOP_SHARE} (lib/format/repetition.ts): at RL step 1 ` +
      `almost no message ` +
      'reaches it, late in the collapsed vanilla runs the shares pile up at both ends, and the threshold sits ' +
        'between them. ' +
      `read by the rule = messages with ${LOOP_MIN_CHARS}+ characters besides whitespace that are no healthy call ` +
        `and no control-tag collapse.`],
  };
}

/** Long enough for the loop rule to read it. */
function isRepetitionLoopCandidate(m: string): boolean {
  return m.replace(/\s+/g, '').length >= LOOP_MIN_CHARS;
}

/** "a 3, b 2" over the values of `xs`, most frequent first (ties in first-seen order). */
function tally(xs: string[]): string {
  const counts = new Map<string, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([x, n]) => `${x} ${n}`).join(', ') || '—';
}

/**
 * The collapse each regime has, in one row: the collapsed vanilla GRPO runs (any rate), their dominant late modes,
 * the highest share of bare `<tool_call>` messages (the paper: 87%), where the probe's mass went and whether the
 * probe moved before the reward halved.
 */
export function collapseSummaryTable(stores: { label: string; store: ResultsStore }[]): ReportTable {
  const columns = ['regime', 'collapsed vanilla runs', 'dominant late mode (runs)', 'highest late bare <tool_call> (%)',
    'mass from {" went to (runs)', 'probe moved first (runs)'];
  const rows: string[][] = [];
  const raw: RawRow[] = [];
  for (const { label, store } of stores) {
    const vanilla = store.experiments.filter((e) => e.spec.sweepLr !== undefined);
    const all = vanilla.reduce((a, e) => a + e.seeds.length, 0);
    const runs = collapsedAnatomies(store).filter((a) => vanilla.some((e) => e.spec.name === a.config));
    const bare = runs.map((a) => a.modes?.emptyCall).filter((x): x is number => x !== undefined);
    const highest = bare.length ? Math.max(...bare) : null;
    const first = runs.filter((a) => a.order === 'probe first').length;
    rows.push([label, `${runs.length} of ${all}`, tally(runs.map((a) =>
      (a.dominant ? MODE_LABEL[a.dominant] : 'no sample'))), pct(highest),
      tally(runs.map((a) => (a.mass ? JSON.stringify(a.mass.token) : 'none'))), `${first} of ${runs.length}`]);
    raw.push({ config: label, label, seeds: [], values: { collapsed: runs.length, runs: all, highestBare: highest,
      probeFirst: first } });
  }
  return {
    id: 'table-collapse-summary',
      title: 'The collapse this lab has: vanilla GRPO runs that collapsed, by what they write',
    columns, rows, raw,
    notes: ['Vanilla GRPO at every rate of the sweep. Per run (table "How each run collapsed" of each regime): the ' +
      'mode with the ' +
      'largest share of the late sampled messages, the token that took the probe\'s mass from {" after ' +
        '<tool_call>\\n, and ' +
      'whether p({") fell below 0.9 before the sampled reward halved. The paper\'s vanilla-RL model writes a bare ' +
        '<tool_call> ' +
      'in 87% of its messages.'],
  };
}
