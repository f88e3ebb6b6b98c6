/**
 * What produces which collapse: every RL run of a store against the paper's collapse as docs/design.md E.2
 * pre-registered it, one row per run, with the pipeline differences it ran under (lib/train/pipeline.ts). The four
 * items, each read from committed files only:
 *   1 signature   at least half of the late sampled messages (samples.ts) are an empty call, a bare `<tool_call>`
 *                 (mode emptyCall); void turns are shown beside it and not counted;
 *   2 spike first a control token after `<tool_call>\n` (the probe's p(`<|im_end|>`) or p(`<tool_call>`)) reaches
 *                 SPIKE_LEVEL at an RL step before the sampled reward halves (precursor.ts), or without it halving;
 *   3 skill kept  the final format-OOD accuracy is at least half the starting checkpoint's (its calibration.json);
 *   4 main rate   the run's RL learning rate is the study's main rate (RL_LR).
 * A pilot that meets two or more earns three seeds; all four would be the paper's collapse.
 */
import * as fs from 'fs';
import * as path from 'path';
import { MODE_LABEL } from '../../format/types';
import { GRPOMetric, grpoRecords, stepOf } from '../../train/records';
import { PIPELINE, PipelineConfig } from '../../train/pipeline';
import { RL_LR } from '../../experiments/registry/configs';
import { getStorePreset } from '../../experiments/registry/presets';
import { ExperimentResults, ResultsStore, SeedResult } from '../store/results';
import { lateModes } from '../store/samples';
import { NA, RawRow, ReportTable } from './base';
import { rewardHalvedAt } from './precursor';
import { dominantMode } from './anatomy';

/** E.2 item 2: the probe level a control token must reach. */
export const SPIKE_LEVEL = 0.5;
/** E.2 item 1: the share of late messages that are an empty call. */
export const SIGNATURE_SHARE = 0.5;

export interface SignatureCheck {
  config: string;
  seed: number;
  /** The pipeline options the run had on ('exact' when none). */
  options: string[];
  lr: number;
  id: number | null;
  formatOod: number | null;
  /** The starting checkpoint's greedy format-OOD accuracy (calibration.json), null when unknown. */
  baseFormatOod: number | null;
  lateMessages: number;
  emptyCall: number | null;
  voidTurn: number | null;
  dominant: string;
  /** The first RL step with p(<|im_end|>) or p(<tool_call>) at SPIKE_LEVEL or above, and which token. */
  spikeStep: number | null;
  spikeToken: string | null;
  rewardHalved: number | null;
  items: { signature: boolean; spikeFirst: boolean; skillKept: boolean; mainRate: boolean };
  met: number;
}

/** The pipeline options that are on in `p` ('exact' when none is). */
export function optionsOn(p: Partial<PipelineConfig> | undefined): string[] {
  const on = Object.keys(PIPELINE.fields).filter((k) => (p as Record<string, unknown> | undefined)?.[k] === true);
  return on.length ? on : ['exact'];
}

/** The greedy format-OOD accuracy of the checkpoint a run started from, from its calibration.json. */
function baseFormatOod(e: ExperimentResults, store: ResultsStore): number | null {
  const init = e.spec.init;
  let dir: string | null = null;
  if (init.kind === 'checkpoint') dir = init.path;
  else if (init.kind === 'base') {
    try {
      dir = getStorePreset(store.preset).regime.base;
    } catch {
      dir = null;
    }
  }
  const file = dir ? path.join(dir, 'calibration.json') : null;
  if (!file || !fs.existsSync(file)) return null;
  const cal = JSON.parse(fs.readFileSync(file, 'utf8')) as { greedy?: { formatOod?: number } };
  return cal.greedy?.formatOod ?? null;
}

function spike(g: GRPOMetric[]): { step: number | null; token: string | null } {
  for (const r of g) {
    if (r.pImEnd >= SPIKE_LEVEL) return { step: stepOf(r) ?? null, token: '<|im_end|>' };
    if (r.pToolCall >= SPIKE_LEVEL) return { step: stepOf(r) ?? null, token: '<tool_call>' };
  }
  return { step: null, token: null };
}

/** One run against E.2's four items. */
export function signatureCheck(store: ResultsStore, e: ExperimentResults, s: SeedResult): SignatureCheck {
  const g = grpoRecords(s.metrics);
  const late = lateModes(s);
  const lr = g.reduce((m, r) => Math.max(m, r.lr), 0);
  const base = baseFormatOod(e, store);
  const formatOod = s.summary.eval.format_ood?.mean ?? null;
  const { step: spikeStep, token: spikeToken } = spike(g);
  const rewardHalved = rewardHalvedAt(g);
  const items = {
    signature: (late.shares?.emptyCall ?? 0) >= SIGNATURE_SHARE,
    spikeFirst: spikeStep !== null && (rewardHalved === null || spikeStep < rewardHalved),
    skillKept: formatOod !== null && base !== null && formatOod >= base / 2,
    mainRate: Math.abs(lr - RL_LR) < 1e-12,
  };
  return {
    config: e.spec.name, seed: s.seed, options: optionsOn(e.spec.pipeline), lr,
    id: s.summary.eval.id?.mean ?? null, formatOod, baseFormatOod: base, lateMessages: late.n,
    emptyCall: late.shares?.emptyCall ?? null, voidTurn: late.shares?.voidTurn ?? null,
    dominant: late.shares ? MODE_LABEL[dominantMode(late.shares)] : NA,
    spikeStep, spikeToken, rewardHalved, items, met: Object.values(items).filter(Boolean).length,
  };
}

/** Every RL run of the store, in registry order, one per seed. */
export function signatureChecks(store: ResultsStore): SignatureCheck[] {
  return store.experiments.flatMap((e) => e.seeds.filter((s) => grpoRecords(s.metrics).length > 0)
    .map((s) => signatureCheck(store, e, s)));
}

const pct = (x: number | null) => (x === null ? NA : (100 * x).toFixed(1));
const mark = (b: boolean) => (b ? 'yes' : 'no');

/** The table "What produces which collapse" (docs/design.md E.2). */
export function pipelineTable(store: ResultsStore): ReportTable {
  const runs = signatureChecks(store);
  const columns = ['run', 'pipeline options', 'lr', 'ID (%)', 'format-OOD (%) / start', 'late messages',
    'dominant late mode', 'empty call (%)', 'void turn (%)', `control token ≥ ${SPIKE_LEVEL} at`, 'reward halved at',
    '1 signature', '2 spike first', '3 skill kept', '4 main rate', 'items met'];
  const raw: RawRow[] = [];
  const rows = runs.map((c) => {
    raw.push({ config: c.config, label: `${c.config}, seed ${c.seed}`, seeds: [c.seed], values: {
      'ID (%)': c.id, 'format-OOD (%) / start': c.formatOod, 'empty call (%)': c.emptyCall,
      'void turn (%)': c.voidTurn, [columns[9]]: c.spikeStep, 'reward halved at': c.rewardHalved, 'items met': c.met,
    } });
    return [`${c.config}, seed ${c.seed}`, c.options.join(', '), c.lr.toExponential(0), pct(c.id),
      `${pct(c.formatOod)} / ${pct(c.baseFormatOod)}`, String(c.lateMessages), c.dominant, pct(c.emptyCall),
      pct(c.voidTurn), c.spikeStep === null ? 'never' : `${c.spikeStep} (${c.spikeToken})`,
      c.rewardHalved === null ? 'never' : String(c.rewardHalved), mark(c.items.signature), mark(c.items.spikeFirst),
      mark(c.items.skillKept), mark(c.items.mainRate), `${c.met} of 4`];
  });
  return {
    id: 'table-pipeline', title: 'What produces which collapse: each run against the paper\'s, as pre-registered',
    columns, rows, raw,
    notes: rows.length ? [
      'The four items of docs/design.md E.2, written before any pipeline option ran: 1 at least ' +
        `${100 * SIGNATURE_SHARE}% of the late sampled messages (last third of the RL steps) are a bare <tool_call> ` +
        '(void turns beside it, not counted); 2 the probe\'s p(<|im_end|>) or p(<tool_call>) after <tool_call>\\n ' +
        `reaches ${SPIKE_LEVEL} before the sampled reward halves; 3 final format-OOD at least half the starting ` +
        'checkpoint\'s (its calibration.json); 4 at the main rate.',
      'Items 3 and 4 hold for any run at the main rate that keeps its skill, collapsed or not: only 1 and 2 say ' +
        'that a collapse happened, so a pilot earns three seeds when it meets two items of which one is 1 or 2 ' +
        '(E.2 says "two or more"; read literally, the exact pipeline\'s healthy run would qualify).',
      'All four would be the paper\'s collapse. Pipeline options: ' +
        'lib/train/pipeline.ts (E1 closedCallsOnly, E2 retokenize, E3 trainCutEnd, E4 bf16Sampler, E5 ' +
        'microBatchWeights); steps are global steps.',
    ] : ['No RL run in this store.'],
  };
}
