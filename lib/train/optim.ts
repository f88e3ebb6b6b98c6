/**
 * AdamW with global-norm gradient clipping, the optimizer of every stage in the paper (docs/design.md A.4, A.6).
 *
 * Follows torch.optim.AdamW exactly (decoupled weight decay, bias correction):
 *   p <- p * (1 - lr * wd)
 *   m <- b1 m + (1 - b1) g ;  v <- b2 v + (1 - b2) g^2
 *   p <- p - (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * and torch.nn.utils.clip_grad_norm_ (coef = maxNorm / (norm + 1e-6), applied only when < 1).
 *
 * Weight decay goes to every parameter except biases and LayerNorm gains, as TRL / HF Trainer do by default
 * (they exclude "bias" and "LayerNorm.weight"); embeddings and the head are decayed.
 */
import * as tf from '@tensorflow/tfjs';
import { checkFinite } from './diverged';

export interface AdamWConfig {
  /** Default 0.9 (torch / HF default, used by the paper's veRL config). */
  beta1: number;
  /** Default 0.999 (torch / HF default). */
  beta2: number;
  /** Default 1e-8 (torch / HF default). */
  eps: number;
  /** Decoupled weight decay. Default 0.01 (paper, docs/design.md A.4). */
  weightDecay: number;
  /** Global-norm clip threshold; <= 0 or Infinity disables clipping. Default 1.0 (paper, docs/design.md A.4). */
  maxGradNorm: number;
  /** Which parameters get no weight decay. Default: names ending in ".bias" and LayerNorm gains (ln_*.weight). */
  noDecay: (name: string) => boolean;
}

/** HF-style exclusion: biases and LayerNorm gains are not decayed. */
export function defaultNoDecay(name: string): boolean {
  return name.endsWith('.bias') || /(^|\.)ln_[^.]*\.weight$/.test(name);
}

export const DEFAULT_ADAMW: AdamWConfig = {
  beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1.0, noDecay: defaultNoDecay,
};

/** Gradients by parameter name: a Map or a plain NamedTensorMap. */
export type GradMap = Map<string, tf.Tensor> | tf.NamedTensorMap;

function entries(grads: GradMap): [string, tf.Tensor][] {
  return grads instanceof Map ? Array.from(grads.entries()) : Object.entries(grads);
}

/** sqrt(sum of squares of every element of every tensor), as one number (one sync). */
export function globalNorm(tensors: tf.Tensor[]): number {
  if (tensors.length === 0) return 0;
  const s = tf.tidy(() => tf.sqrt(tf.addN(tensors.map((t) => tf.sum(tf.square(t))))));
  const n = s.dataSync()[0];
  s.dispose();
  return n;
}

/** torch's clip coefficient: min(1, maxNorm / (norm + 1e-6)); 1 when clipping is disabled. */
export function clipCoefficient(norm: number, maxNorm: number): number {
  if (!(maxNorm > 0) || !Number.isFinite(maxNorm)) return 1;
  return Math.min(1, maxNorm / (norm + 1e-6));
}

/** Plain-data optimizer state, for checkpoints (see saveOptimizerState in lib/model/checkpoint.ts). */
export interface AdamWState {
  stepCount: number;
  /** First and second moments by parameter name, same shapes as the parameters. */
  m: Record<string, Float32Array>;
  v: Record<string, Float32Array>;
}

export class AdamW {
  readonly config: AdamWConfig;
  private readonly params: Map<string, tf.Variable>;
  private readonly m = new Map<string, tf.Variable>();
  private readonly v = new Map<string, tf.Variable>();
  private t = 0;

  constructor(params: Map<string, tf.Variable>, cfg: Partial<AdamWConfig> = {}) {
    this.config = { ...DEFAULT_ADAMW, ...cfg };
    const c = this.config;
    if (!(c.beta1 >= 0 && c.beta1 < 1)) throw new Error(`AdamW: beta1 must be in [0, 1), got ${c.beta1}`);
    if (!(c.beta2 >= 0 && c.beta2 < 1)) throw new Error(`AdamW: beta2 must be in [0, 1), got ${c.beta2}`);
    if (!(c.eps > 0)) throw new Error(`AdamW: eps must be > 0, got ${c.eps}`);
    if (!(c.weightDecay >= 0)) throw new Error(`AdamW: weightDecay must be >= 0, got ${c.weightDecay}`);
    this.params = params;
    for (const [name, p] of params) {
      // tidy frees the zerosLike temporaries; the variables survive it
      this.m.set(name, tf.tidy(() => tf.variable(tf.zerosLike(p), false)));
      this.v.set(name, tf.tidy(() => tf.variable(tf.zerosLike(p), false)));
    }
  }

  /** Number of steps taken so far (t in the bias corrections). */
  get stepCount(): number {
    return this.t;
  }

  /**
   * One update with learning rate `lr`. Gradients of names not in params throw; params without a gradient
   * are skipped entirely (no decay either), like torch params whose .grad is None. Does not dispose grads.
   * Returns the global gradient norm BEFORE clipping and the clip coefficient applied.
   */
  step(grads: GradMap, lr: number): { gradNorm: number; clipCoef: number } {
    if (!(lr >= 0) || !Number.isFinite(lr)) throw new Error(`AdamW.step: lr must be a finite number >= 0, got ${lr}`);
    const list = entries(grads);
    for (const [name, g] of list) {
      const p = this.params.get(name);
      if (p === undefined) throw new Error(`AdamW.step: gradient for unknown parameter "${name}"`);
      if (g.size !== p.size) throw new Error(`AdamW.step: gradient "${name}" has shape [${g.shape}], parameter has ` +
        `[${p.shape}]`);
    }
    const gradNorm = globalNorm(list.map(([, g]) => g));
    checkFinite('gradient norm', gradNorm); // NaN/Inf in the gradients: refused before it reaches the weights
    const clipCoef = clipCoefficient(gradNorm, this.config.maxGradNorm);
    this.t += 1;
    const { beta1: b1, beta2: b2, eps, weightDecay } = this.config;
    const stepSize = lr / (1 - Math.pow(b1, this.t));
    const bc2Sqrt = Math.sqrt(1 - Math.pow(b2, this.t));
    tf.tidy(() => {
      for (const [name, g0] of list) {
        const p = this.params.get(name)!;
        const m = this.m.get(name)!;
        const v = this.v.get(name)!;
        const g = clipCoef < 1 ? tf.mul(g0, clipCoef) : g0;
        const mNew = tf.add(tf.mul(m, b1), tf.mul(g, 1 - b1));
        const vNew = tf.add(tf.mul(v, b2), tf.mul(tf.square(g), 1 - b2));
        m.assign(mNew);
        v.assign(vNew);
        const decay = this.config.noDecay(name) ? 0 : lr * weightDecay;
        const base = decay > 0 ? tf.mul(p, 1 - decay) : p;
        const denom = tf.add(tf.div(tf.sqrt(vNew), bc2Sqrt), eps);
        p.assign(tf.sub(base, tf.mul(tf.div(mNew, denom), stepSize)));
      }
    });
    return { gradNorm, clipCoef };
  }

  /** A copy of the moments and step count as plain arrays. */
  getState(): AdamWState {
    const m: Record<string, Float32Array> = {};
    const v: Record<string, Float32Array> = {};
    for (const name of this.params.keys()) {
      m[name] = this.m.get(name)!.dataSync() as Float32Array;
      v[name] = this.v.get(name)!.dataSync() as Float32Array;
    }
    return { stepCount: this.t, m, v };
  }

  /** Restore a state from getState() (same parameter names and sizes, else a clear error). */
  setState(state: AdamWState): void {
    for (const name of this.params.keys()) {
      for (const [which, src, dst] of [['m', state.m, this.m], ['v', state.v, this.v]] as const) {
        const data = src[name];
        const target = dst.get(name)!;
        if (data === undefined) throw new Error(`AdamW.setState: state lacks ${which} for parameter "${name}"`);
        if (data.length !== target.size) {
          throw new Error(`AdamW.setState: ${which}["${name}"] has ${data.length} values, parameter has ` +
            `${target.size}`);
        }
        tf.tidy(() => target.assign(tf.tensor(data, target.shape, 'float32')));
      }
    }
    if (!Number.isInteger(state.stepCount) ||
      state.stepCount < 0) throw new Error(`AdamW.setState: bad stepCount ${state.stepCount}`);
    this.t = state.stepCount;
  }

  /** Free the moment variables (not the parameters). */
  dispose(): void {
    for (const x of this.m.values()) x.dispose();
    for (const x of this.v.values()) x.dispose();
    this.m.clear();
    this.v.clear();
  }
}

/**
 * Loss and gradients w.r.t. every parameter in `params`, keyed by our parameter names.
 * `lossFn` must build its graph from the variables in params (e.g. model.forward). The caller disposes
 * `value` and every tensor in `grads`. Parameters the loss does not depend on get no entry.
 */
export function computeGrads(
  params: Map<string, tf.Variable>, lossFn: () => tf.Scalar,
): { value: tf.Scalar; grads: Map<string, tf.Tensor> } {
  const names = Array.from(params.keys());
  const vars = names.map((n) => params.get(n)!);
  const { value, grads } = tf.variableGrads(lossFn, vars);
  const out = new Map<string, tf.Tensor>();
  names.forEach((n, i) => {
    const g = grads[vars[i].name];
    if (g !== undefined && g !== null) out.set(n, g);
  });
  return { value, grads: out };
}

/** Dispose every tensor of a gradient map. */
export function disposeGrads(grads: GradMap): void {
  for (const [, g] of entries(grads)) g.dispose();
}
