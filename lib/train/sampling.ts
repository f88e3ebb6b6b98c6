/**
 * Next-token choice from one row of logits, on the CPU with our own PRNG (docs/design.md A.4: temperature 1.0,
 * top-p 1.0 for RL sampling; greedy for validation). Doing it in JS keeps runs reproducible across
 * backends up to the logits themselves.
 */
import { Rng } from '../prng';

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
}

/**
 * Pick a token from `logits[offset .. offset+V)`. `forbidden` ids get probability 0 (constrained decoding);
 * the returned logProb is still that of the unconstrained policy, so constraints show up as low log-probs.
 */
export function sampleToken(logits: Float32Array, offset: number, vocabSize: number, opts: SampleOptions,
  rng: Rng, forbidden?: readonly number[] | null): SampledToken {
  // log-sum-exp of the raw policy, for the reported log-prob
  let max = -Infinity;
  for (let v = 0; v < vocabSize; v++) if (logits[offset + v] > max) max = logits[offset + v];
  let sum = 0;
  for (let v = 0; v < vocabSize; v++) sum += Math.exp(logits[offset + v] - max);
  const logZ = max + Math.log(sum);

  const banned = forbidden && forbidden.length > 0 ? new Set(forbidden) : null;
  let token = -1;
  if (opts.greedy || opts.temperature <= 0) {
    let best = -Infinity;
    for (let v = 0; v < vocabSize; v++) {
      if (banned && banned.has(v)) continue;
      if (logits[offset + v] > best) { best = logits[offset + v]; token = v; }
    }
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
  return { token, logProb: logits[offset + token] - logZ };
}
