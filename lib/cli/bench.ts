/**
 * `toolrl bench`: throughput on the active backend, as medians of several runs.
 *   train_tokens_per_s   forward + backward + AdamW on rollout-shaped batches (B16 x T256)
 *   sample_tokens_per_s  KV-cache decoding, model only (batch 64, 100-token prefill, 100 decode steps)
 *   rollout_tokens_per_s the whole multi-turn rollout engine with the environments (8 tasks x group 8),
 *                        every token the policy reads or writes counted
 *   grpo                 one whole GRPO step (32 tasks x group 8, or --prompts N) from each regime's base, split by
 *                        phase: the figure that sets how long an RL run takes
 *   anchor               the same model and shapes in PyTorch (--anchor PYTHON; scripts/bench-torch.py)
 * The policy of the rollout and GRPO figures is a regime's base checkpoint when it has the benchmarked shape
 * (`--model DxLxH`, default: the default model), else an untrained model of that shape: the base decides how many
 * tokens a step samples and trains on. `--parts` picks the measurements. Progress goes to stderr; the result to stdout.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Rng } from '../prng';
import { activeBackend } from '../backend';
import { benchModel } from '../bench/model';
import { benchGrpoStep, GrpoStepBench } from '../bench/grpo';
import { AnchorResult, runAnchor } from '../bench/anchor';
import { defaultGPTConfig, GPTConfig } from '../model/config';
import { GPT } from '../model/gpt';
import { loadCheckpoint } from '../model/checkpoint';
import { loadTokenizer, Tokenizer } from '../format/tokenizer';
import { loadTasks } from '../envs/data';
import { Episode } from '../envs/episode';
import { rollout } from '../train/rollout';
import { getRegime, RegimeName, REGIMES } from '../experiments/registry/regimes';
import { defaultGRPOConfig } from '../train/grpo/config';
import { UsageError } from './args';

/** What `toolrl bench --parts` can measure. */
export const BENCH_PARTS = ['train', 'sample', 'rollout', 'grpo'] as const;
export type BenchPart = typeof BENCH_PARTS[number];

export interface BenchReport {
  backend: string;
  /** Absent where --parts left the measurement out (so are the other figures of its part). */
  train_tokens_per_s?: number;
  train_ms_per_step?: number;
  sample_tokens_per_s?: number;
  /** Prefill + decode tokens over the whole sampling time. */
  sample_total_tokens_per_s?: number;
  rollout_tokens_per_s?: number;
  rollout_sampled_tokens_per_s?: number;
  rollout_policy?: string;
  /** The GRPO step from each regime's base (lib/bench/grpo.ts), with the policy it rolled out. */
  grpo?: Partial<Record<RegimeName, GrpoStepBench & { policy: string }>>;
  /** PyTorch on the same model and shapes (--anchor), or absent. */
  anchor?: AnchorResult;
  model: GPTConfig & { numParams: number };
  runs: number;
}

/** The largest model `--model` accepts: past these a benchmark on two cores would not finish in a day. */
export const MODEL_BOUNDS = { nEmbd: 1024, nLayer: 24, nHead: 64 };

/** "128x4x4" -> { nEmbd: 128, nLayer: 4, nHead: 4 }; errors (UsageError) name --model and the bad part. */
export function parseModelShape(spec: string): { nEmbd: number; nLayer: number; nHead: number } {
  const m = /^(\d+)x(\d+)x(\d+)$/.exec(spec.trim());
  if (!m) throw new UsageError(`--model must look like DxLxH (e.g. 128x4x4), got ${JSON.stringify(spec)}`);
  const shape = { nEmbd: Number(m[1]), nLayer: Number(m[2]), nHead: Number(m[3]) };
  const part = { nEmbd: 'width D', nLayer: 'layer count L', nHead: 'head count H' } as const;
  for (const k of ['nEmbd', 'nLayer', 'nHead'] as const) {
    if (!(shape[k] >= 1 && shape[k] <= MODEL_BOUNDS[k])) {
      throw new UsageError(`--model ${spec}: the ${part[k]} must be an integer in [1, ${MODEL_BOUNDS[k]}], got ` +
        `${shape[k]}`);
    }
  }
  if (shape.nEmbd % shape.nHead !== 0) throw new UsageError(`--model ${spec}: the width D (${shape.nEmbd}) must be ` +
    `a multiple of the head count H (${shape.nHead})`);
  return shape;
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The policy to roll out: the checkpoint `base` if it has shape `cfg`, else an untrained model (seed 1). */
function loadPolicy(cfg: GPTConfig, tok: Tokenizer, base: string): { model: GPT; name: string } {
  if (fs.existsSync(path.join(base, 'model.json'))) {
    const { model } = loadCheckpoint(base, { expectVocabFingerprint: tok.fingerprint });
    const c = model.config;
    if (c.nEmbd === cfg.nEmbd && c.nLayer === cfg.nLayer && c.nHead === cfg.nHead) return { model, name: base };
    model.dispose();
  }
  return { model: new GPT(cfg, 1), name: 'untrained model (no base checkpoint of this shape)' };
}

export interface BenchOptions {
  runs: number;
  dataDir: string;
  /** "DxLxH" (default: the default model). */
  model?: string;
  /** Training tasks of the GRPO step (x group 8). Default 32. */
  prompts?: number;
  /** Whose base rolls out the GRPO step. Default both. */
  regimes?: RegimeName[];
  parts?: BenchPart[];
  /** Read shared prompts once (GRPOConfig.sharePrompts) in the rollout and GRPO figures. Default false, as in runs. */
  sharePrompts?: boolean;
  /** A Python interpreter with torch: adds the PyTorch column. */
  anchor?: string;
  log?: (msg: string) => void;
}

/** The rollout engine alone with the environments: 8 training tasks x 8, all tokens and sampled tokens per second. */
function benchRollout(cfg: GPTConfig, tok: Tokenizer, base: string, dataDir: string, runs: number,
  sharePrompts: boolean, log: (msg: string) => void) {
  const tasks = loadTasks('train', dataDir);
  const policy = loadPolicy(cfg, tok, base);
  const all: number[] = [];
  const sampled: number[] = [];
  try {
    for (let r = 0; r < runs + 1; r++) {
      const episodes = tasks.slice(0, 8).flatMap((t) => Array.from({ length: 8 }, () => new Episode(t)));
      const t0 = performance.now();
      const trajs = rollout(policy.model, tok, episodes, { rng: new Rng(r + 1), config: { sharePrompts } });
      const s = (performance.now() - t0) / 1000;
      log(`rollout ${r + 1}/${runs + 1}: ${s.toFixed(2)} s, ${trajs.reduce((a, t) => a + t.ids.length, 0)} tokens`);
      if (r === 0) continue; // warm-up
      all.push(trajs.reduce((a, t) => a + t.ids.length, 0) / s);
      sampled.push(trajs.reduce((a, t) => a + t.lossMask.reduce((x, y) => x + y, 0), 0) / s);
    }
  } finally {
    policy.model.dispose();
  }
  return { rollout_tokens_per_s: Math.round(median(all)), rollout_sampled_tokens_per_s: Math.round(median(sampled)),
    rollout_policy: policy.name };
}

/** One GRPO step, end to end, from `base` against a frozen copy of it. */
function benchStep(cfg: GPTConfig, tok: Tokenizer, base: string, dataDir: string,
  opts: { runs: number; prompts?: number; sharePrompts?: boolean; log: (msg: string) => void }) {
  const policy = loadPolicy(cfg, tok, base);
  const ref = loadPolicy(cfg, tok, base).model;
  try {
    return { ...benchGrpoStep(policy.model, ref, tok, loadTasks('train', dataDir), loadTasks('test', dataDir), opts),
      policy: policy.name };
  } finally {
    policy.model.dispose();
    ref.dispose();
  }
}

export function runBench(opts: BenchOptions): BenchReport {
  const log = opts.log ?? (() => {});
  const parts = new Set<BenchPart>(opts.parts ?? BENCH_PARTS);
  const regimes = opts.regimes ?? REGIMES;
  const tok = loadTokenizer(path.join(opts.dataDir, 'vocab.json'));
  const shape = opts.model ? parseModelShape(opts.model) : {};
  const cfg = defaultGPTConfig(tok.size, shape);
  log(`model d${cfg.nEmbd} x ${cfg.nLayer} layers x ${cfg.nHead} heads on ${activeBackend()}`);
  const m = benchModel(cfg, { runs: opts.runs, train: parts.has('train'), sample: parts.has('sample') }, log);
  const report: BenchReport = { backend: activeBackend(), model: { ...cfg, numParams: m.numParams }, runs: opts.runs };
  if (m.train) Object.assign(report, { train_tokens_per_s: Math.round(m.train.tokensPerSec),
    train_ms_per_step: Math.round(m.train.msPerStep) });
  if (m.sample) {
    Object.assign(report, { sample_tokens_per_s: Math.round(m.sample.tokensPerSec),
      sample_total_tokens_per_s: Math.round(m.sample.totalTokensPerSec) });
  }
  if (parts.has('rollout')) Object.assign(report, benchRollout(cfg, tok, getRegime(regimes[0]).base, opts.dataDir,
    opts.runs, opts.sharePrompts ?? defaultGRPOConfig.sharePrompts, log));
  if (parts.has('grpo')) {
    report.grpo = {};
    for (const r of regimes) {
      log(`GRPO step from the ${r} base (${getRegime(r).base})`);
      report.grpo[r] = benchStep(cfg, tok, getRegime(r).base, opts.dataDir,
        { runs: opts.runs, prompts: opts.prompts, sharePrompts: opts.sharePrompts, log });
    }
  }
  if (opts.anchor) {
    log(`PyTorch anchor: ${opts.anchor} scripts/bench-torch.py`);
    report.anchor = runAnchor(opts.anchor, `${cfg.nEmbd}x${cfg.nLayer}x${cfg.nHead}`, cfg.vocabSize, opts.runs);
  }
  return report;
}

const pct = (x: number | undefined, of: number | undefined) =>
  (x === undefined || !of ? '' : ` (${Math.round((100 * x) / of)}% of PyTorch)`);
const phaseList = (phases: Record<string, number>) => Object.entries(phases).map(([k, v]) =>
  `${k} ${v.toFixed(2)}`).join(', ');

export function formatBench(r: BenchReport): string {
  const a = r.anchor;
  const lines =
    [`backend ${r.backend}, model d${r.model.nEmbd} x ${r.model.nLayer} layers x ${r.model.nHead} heads, ` +
    `${r.model.numParams} parameters, vocab ${r.model.vocabSize}`];
  if (r.train_tokens_per_s !== undefined) lines.push(`  train     ${r.train_tokens_per_s} tokens/s ` +
    `(${r.train_ms_per_step} ms per step)${pct(r.train_tokens_per_s, a?.train_tokens_per_s)}`);
  if (r.sample_tokens_per_s !== undefined) {
    lines.push(`  sample    ${r.sample_tokens_per_s} tokens/s decoding, ${r.sample_total_tokens_per_s} with the ` +
      `prefill (model only, KV cache, batch 64)${pct(r.sample_tokens_per_s, a?.sample_tokens_per_s)}`);
  }
  if (r.rollout_tokens_per_s !== undefined) {
    lines.push(`  rollout   ${r.rollout_tokens_per_s} tokens/s read+written, ${r.rollout_sampled_tokens_per_s} ` +
      `sampled tokens/s (with environments; ${r.rollout_policy})`);
  }
  for (const [regime, g] of Object.entries(r.grpo ?? {})) {
    lines.push(`  grpo step ${g.seconds.toFixed(2)} s from the ${regime} base, ${g.trajectories} trajectories of ` +
      `~${g.tokensPerTrajectory} tokens (${phaseList(g.phases)})`);
  }
  if (a) lines.push(`  anchor    ${a.backend}: train ${a.train_tokens_per_s} tokens/s, sample ` +
    `${a.sample_tokens_per_s} tokens/s`);
  lines.push(`  (medians of ${r.runs} runs)`);
  return lines.join('\n');
}

/** The Backends table of docs/backends.md: one row for this backend (and one for the anchor when measured). */
export function benchMarkdown(r: BenchReport): string {
  const a = r.anchor;
  const g = r.grpo ?? {};
  const step = (x?: GrpoStepBench) =>
    (x ? `${x.seconds.toFixed(1)} s (${x.runs.map((s) => s.toFixed(1)).join(', ')})` : '-');
  const n = (x?: number) => (x === undefined ? '-' : x.toLocaleString('en-US'));
  const rows = [
    '| model | backend | train tok/s | sample tok/s | GRPO step, instruct base | GRPO step, strong base |',
    '|---|---|---:|---:|---:|---:|',
  ];
  const name = `d${r.model.nEmbd} x ${r.model.nLayer} x ${r.model.nHead}`;
  if (a) rows.push(`| ${name} | ${a.backend} | ${n(a.train_tokens_per_s)} | ${n(a.sample_tokens_per_s)} | - | - |`);
  rows.push(`| ${name} | ${r.backend} | ` +
    `${n(r.train_tokens_per_s)}${pct(r.train_tokens_per_s, a?.train_tokens_per_s)} | ` +
    `${n(r.sample_tokens_per_s)}${pct(r.sample_tokens_per_s, a?.sample_tokens_per_s)} | ${step(g.instruct)} | ` +
      `${step(g.strong)} |`);
  const traj = Object.values(g)[0];
  return rows.join('\n') +
    (traj ? `\n\nGRPO step: ${traj.trajectories} trajectories, median of ${r.runs} steps (each step's seconds in ` +
    `brackets).` : '');
}
