/**
 * Next-token choice from one row of logits, on the CPU with our own PRNG (docs/design.md A.4: temperature 1.0,
 * top-p 1.0 for RL sampling; greedy for validation). Doing it in JS keeps runs reproducible across
 * backends up to the logits themselves.
 */
import { Rng } from '../prng';
import { checkFinite } from './diverged';

export interface SampleOptions {
  /** Softmax temperature; the paper samples at 1.0 (official GRPO script). */
  temperature: number;
  /** Take the arg-max instead of sampling (the paper's greedy validation). */
  greedy: boolean;
}

export interface SampledToken {
  token: number;
  /** log p(token) under the *untempered, unmasked* policy: the quantity the GRPO ratio uses. */
  logProb: number;
  /** Entropy (nats) of the untempered, unmasked next-token distribution. */
  entropy: number;
}

/**
 * Pick a token from `logits[offset .. offset+V)`. `forbidden` ids get probability 0 (constrained decoding);
 * the returned logProb is still that of the unconstrained policy, so constraints show up as low log-probs.
 */
export function sampleToken(logits: Float32Array, offset: number, vocabSize: number, opts: SampleOptions,
  rng: Rng, forbidden?: readonly number[] | null): SampledToken {
  // exp(logit - max) of the raw policy: its log-sum-exp gives the log-prob, and its weighted logits the
  // entropy H = logZ - sum_v p_v logit_v; at temperature 1 without constraints it is also the sampling weight
  let max = -Infinity;
  for (let v = 0; v < vocabSize; v++) if (logits[offset + v] > max) max = logits[offset + v];
  const e = new Float64Array(vocabSize);
  let sum = 0;
  let dot = 0;
  for (let v = 0; v < vocabSize; v++) {
    const d = logits[offset + v] - max;
    const x = Math.exp(d);
    e[v] = x;
    sum += x;
    dot += x * d;
  }
  // a NaN logit makes the sum NaN (an infinite one, the max): the weights have diverged, not the sampler failed
  checkFinite('logits', max + sum);
  const logZ = max + Math.log(sum);
  const entropy = Math.log(sum) - dot / sum;

  const banned = forbidden && forbidden.length > 0 ? new Set(forbidden) : null;
  let token = -1;
  if (opts.greedy || opts.temperature <= 0) {
    let best = -Infinity;
    for (let v = 0; v < vocabSize; v++) {
      if (banned && banned.has(v)) continue;
      if (logits[offset + v] > best) { best = logits[offset + v]; token = v; }
    }
  } else if (opts.temperature === 1 && banned === null) {
    token = rng.categorical(e);
  } else {
    const t = opts.temperature;
    let tmax = -Infinity;
    for (let v = 0; v < vocabSize; v++) {
      if (banned && banned.has(v)) continue;
      if (logits[offset + v] / t > tmax) tmax = logits[offset + v] / t;
    }
    const weights = new Float64Array(vocabSize);
    for (let v = 0; v < vocabSize; v++) {
      weights[v] = banned && banned.has(v) ? 0 : Math.exp(logits[offset + v] / t - tmax);
    }
    token = rng.categorical(weights);
  }
  if (token < 0) throw new Error('sampleToken: every token is forbidden');
  return { token, logProb: logits[offset + token] - logZ, entropy };
}

/**
 * Probabilities of `tokens` in one row of logits, and the most likely token outside them: what the
 * logit-gradient split reads at a probe position (lib/diagnostics/gradsplit.ts).
 */
export function readProbs(logits: Float32Array, offset: number, vocabSize: number, tokens: readonly number[]):
  { probs: number[]; topOther: { id: number; p: number } } {
  let max = -Infinity;
  for (let v = 0; v < vocabSize; v++) if (logits[offset + v] > max) max = logits[offset + v];
  let sum = 0;
  for (let v = 0; v < vocabSize; v++) sum += Math.exp(logits[offset + v] - max);
  const p = (v: number) => Math.exp(logits[offset + v] - max) / sum;
  let top = -1;
  for (let v = 0; v < vocabSize; v++) {
    if (tokens.includes(v)) continue;
    if (top < 0 || logits[offset + v] > logits[offset + top]) top = v;
  }
  return { probs: tokens.map(p), topOther: { id: top, p: top < 0 ? 0 : p(top) } };
}
