/**
 * `toolrl bench`: throughput of the default model on the active backend, as medians of several runs.
 *   train_tokens_per_s   forward + backward + AdamW on rollout-shaped batches
 *   sample_tokens_per_s  KV-cache decoding, model only (batch 64)
 *   rollout_tokens_per_s the whole multi-turn rollout engine with the environments (8 tasks x group 8),
 *                        every token the policy reads or writes counted, using the base checkpoint when present
 */
import * as fs from 'fs';
import * as path from 'path';
import { Rng } from '../prng';
import { activeBackend } from '../backend';
import { benchModel } from '../model/bench';
import { defaultGPTConfig, GPTConfig } from '../model/config';
import { GPT } from '../model/gpt';
import { loadCheckpoint } from '../model/checkpoint';
import { loadTokenizer } from '../format/tokenizer';
import { loadTasks } from '../envs/data';
import { Episode } from '../envs/episode';
import { rollout } from '../train/rollout';
import { BASE_CHECKPOINT } from '../experiments/configs';

export interface BenchReport {
  backend: string;
  train_tokens_per_s: number;
  sample_tokens_per_s: number;
  rollout_tokens_per_s: number;
  rollout_sampled_tokens_per_s: number;
  rollout_policy: string;
  train_ms_per_step: number;
  model: GPTConfig & { numParams: number };
  runs: number;
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function runBench(opts: { runs: number; dataDir: string }): BenchReport {
  const tok = loadTokenizer(path.join(opts.dataDir, 'vocab.json'));
  const cfg = defaultGPTConfig(tok.size);
  const m = benchModel(cfg, { runs: opts.runs });

  // the rollout engine with environments
  const hasBase = fs.existsSync(path.join(BASE_CHECKPOINT, 'model.json'));
  const model = hasBase ? loadCheckpoint(BASE_CHECKPOINT, { expectVocabFingerprint: tok.fingerprint }).model : new GPT(cfg, 1);
  const tasks = loadTasks('train', opts.dataDir).slice(0, 8);
  const all: number[] = [];
  const sampled: number[] = [];
  try {
    for (let r = 0; r < opts.runs + 1; r++) {
      const episodes = tasks.flatMap((t) => Array.from({ length: 8 }, () => new Episode(t)));
      const t0 = performance.now();
      const trajs = rollout(model, tok, episodes, { rng: new Rng(r + 1) });
      const s = (performance.now() - t0) / 1000;
      if (r === 0) continue; // warm-up
      all.push(trajs.reduce((a, t) => a + t.ids.length, 0) / s);
      sampled.push(trajs.reduce((a, t) => a + t.lossMask.reduce((x, y) => x + y, 0), 0) / s);
    }
  } finally {
    model.dispose();
  }
  return {
    backend: activeBackend(),
    train_tokens_per_s: Math.round(m.train.tokensPerSec),
    sample_tokens_per_s: Math.round(m.sample.tokensPerSec),
    rollout_tokens_per_s: Math.round(median(all)),
    rollout_sampled_tokens_per_s: Math.round(median(sampled)),
    rollout_policy: hasBase ? BASE_CHECKPOINT : 'untrained model (no base checkpoint yet)',
    train_ms_per_step: Math.round(m.train.msPerStep),
    model: { ...cfg, numParams: m.numParams },
    runs: opts.runs,
  };
}

export function formatBench(r: BenchReport): string {
  return [
    `backend ${r.backend}, model d${r.model.nEmbd} x ${r.model.nLayer} layers, ${r.model.numParams} parameters, vocab ${r.model.vocabSize}`,
    `  train     ${r.train_tokens_per_s} tokens/s (${r.train_ms_per_step} ms per step)`,
    `  sample    ${r.sample_tokens_per_s} tokens/s (model only, KV cache, batch 64)`,
    `  rollout   ${r.rollout_tokens_per_s} tokens/s read+written, ${r.rollout_sampled_tokens_per_s} sampled tokens/s (with environments; ${r.rollout_policy})`,
    `  (medians of ${r.runs} runs)`,
  ].join('\n');
}
