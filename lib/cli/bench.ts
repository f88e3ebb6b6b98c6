/**
 * `toolrl bench`: throughput on the active backend, as medians of several runs.
 *   train_tokens_per_s   forward + backward + AdamW on rollout-shaped batches (B16 x T256)
 *   sample_tokens_per_s  KV-cache decoding, model only (batch 64, 100-token prefill, 100 decode steps)
 *   rollout_tokens_per_s the whole multi-turn rollout engine with the environments (8 tasks x group 8),
 *                        every token the policy reads or writes counted
 *   grpo_step_seconds    one whole GRPO step (4 tasks x group 8, or --prompts N), split by phase in grpo_step_phases
 * The policy of the rollout and GRPO figures is a regime's base checkpoint (`--regime`, default strong) when it exists
 * and has the benchmarked shape (`--model DxLxH`, default: the default model), else an untrained model of that shape.
 * The base matters for the GRPO step: its rollouts decide how many tokens the step samples and trains on.
 * Progress goes to stderr; the result to stdout.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Rng } from '../prng';
import { activeBackend } from '../backend';
import { benchModel } from '../bench/model';
import { benchGrpoStep } from '../bench/grpo';
import { defaultGPTConfig, GPTConfig } from '../model/config';
import { GPT } from '../model/gpt';
import { loadCheckpoint } from '../model/checkpoint';
import { loadTokenizer, Tokenizer } from '../format/tokenizer';
import { loadTasks } from '../envs/data';
import { Episode } from '../envs/episode';
import { rollout } from '../train/rollout';
import { BASE_CHECKPOINT } from '../experiments/configs';
import { UsageError } from './args';

export interface BenchReport {
  backend: string;
  train_tokens_per_s: number;
  sample_tokens_per_s: number;
  /** Prefill + decode tokens over the whole sampling time. */
  sample_total_tokens_per_s: number;
  rollout_tokens_per_s: number;
  rollout_sampled_tokens_per_s: number;
  rollout_policy: string;
  train_ms_per_step: number;
  grpo_step_seconds: number;
  /** Seconds per phase of the median GRPO step (see lib/bench/grpo.ts). */
  grpo_step_phases: Record<string, number>;
  grpo_tokens_per_trajectory: number;
  /** Trajectories of the timed GRPO step (prompts x group 8). */
  grpo_trajectories: number;
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
      throw new UsageError(`--model ${spec}: the ${part[k]} must be an integer in [1, ${MODEL_BOUNDS[k]}], got ${shape[k]}`);
    }
  }
  if (shape.nEmbd % shape.nHead !== 0) throw new UsageError(`--model ${spec}: the width D (${shape.nEmbd}) must be a multiple of the head count H (${shape.nHead})`);
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

export function runBench(opts: { runs: number; dataDir: string; model?: string; prompts?: number; base?: string; log?: (msg: string) => void }): BenchReport {
  const base = opts.base ?? BASE_CHECKPOINT;
  const log = opts.log ?? (() => {});
  const tok = loadTokenizer(path.join(opts.dataDir, 'vocab.json'));
  const cfg = defaultGPTConfig(tok.size, opts.model ? parseModelShape(opts.model) : {});
  log(`model d${cfg.nEmbd} x ${cfg.nLayer} layers x ${cfg.nHead} heads on ${activeBackend()}`);
  const m = benchModel(cfg, { runs: opts.runs }, log);

  // the rollout engine with environments
  const tasks = loadTasks('train', opts.dataDir);
  const valTasks = loadTasks('test', opts.dataDir);
  let policy = loadPolicy(cfg, tok, base);
  const all: number[] = [];
  const sampled: number[] = [];
  try {
    for (let r = 0; r < opts.runs + 1; r++) {
      const episodes = tasks.slice(0, 8).flatMap((t) => Array.from({ length: 8 }, () => new Episode(t)));
      const t0 = performance.now();
      const trajs = rollout(policy.model, tok, episodes, { rng: new Rng(r + 1) });
      const s = (performance.now() - t0) / 1000;
      log(`rollout ${r + 1}/${opts.runs + 1}: ${s.toFixed(2)} s, ${trajs.reduce((a, t) => a + t.ids.length, 0)} tokens`);
      if (r === 0) continue; // warm-up
      all.push(trajs.reduce((a, t) => a + t.ids.length, 0) / s);
      sampled.push(trajs.reduce((a, t) => a + t.lossMask.reduce((x, y) => x + y, 0), 0) / s);
    }
  } finally {
    policy.model.dispose();
  }

  // one GRPO step, end to end, against a frozen copy of the starting policy
  policy = loadPolicy(cfg, tok, base);
  const ref = loadPolicy(cfg, tok, base).model;
  let grpo;
  try {
    grpo = benchGrpoStep(policy.model, ref, tok, tasks, valTasks, { runs: opts.runs, prompts: opts.prompts, log });
  } finally {
    policy.model.dispose();
    ref.dispose();
  }
  return {
    backend: activeBackend(),
    train_tokens_per_s: Math.round(m.train.tokensPerSec),
    sample_tokens_per_s: Math.round(m.sample.tokensPerSec),
    sample_total_tokens_per_s: Math.round(m.sample.totalTokensPerSec),
    rollout_tokens_per_s: Math.round(median(all)),
    rollout_sampled_tokens_per_s: Math.round(median(sampled)),
    rollout_policy: policy.name,
    train_ms_per_step: Math.round(m.train.msPerStep),
    grpo_step_seconds: grpo.seconds,
    grpo_step_phases: grpo.phases,
    grpo_tokens_per_trajectory: grpo.tokensPerTrajectory,
    grpo_trajectories: grpo.trajectories,
    model: { ...cfg, numParams: m.numParams },
    runs: opts.runs,
  };
}

export function formatBench(r: BenchReport): string {
  const phases = Object.entries(r.grpo_step_phases).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
  return [
    `backend ${r.backend}, model d${r.model.nEmbd} x ${r.model.nLayer} layers x ${r.model.nHead} heads, ${r.model.numParams} parameters, vocab ${r.model.vocabSize}`,
    `  train     ${r.train_tokens_per_s} tokens/s (${r.train_ms_per_step} ms per step)`,
    `  sample    ${r.sample_tokens_per_s} tokens/s decoding, ${r.sample_total_tokens_per_s} with the prefill (model only, KV cache, batch 64)`,
    `  rollout   ${r.rollout_tokens_per_s} tokens/s read+written, ${r.rollout_sampled_tokens_per_s} sampled tokens/s (with environments; ${r.rollout_policy})`,
    `  grpo step ${r.grpo_step_seconds.toFixed(2)} s for ${r.grpo_trajectories} trajectories of ~${r.grpo_tokens_per_trajectory} tokens (${phases})`,
    `  (medians of ${r.runs} runs)`,
  ].join('\n');
}
