/**
 * A decoder-only GPT in TensorFlow.js core ops (no tf.layers), minGPT-style.
 *
 *   ids [B, T] -> token emb + learned position emb -> nLayer x (pre-LN attention, pre-LN GELU MLP)
 *              -> final LN -> head -> logits [B, T, V]
 *
 * Two entry points share every kernel (lib/model/attention.ts):
 * - forward(ids): training / scoring over whole padded sequences (positions 0..T-1, causal mask);
 * - createCache(B) + append(cache, tokens): incremental decoding of B rollouts at different positions.
 *
 * Shared prefixes (prefixKV + forwardAt with a PrefixContext): the rollouts of a GRPO group share their prompt,
 * about half of each trajectory's tokens. A token reads earlier ones only through their keys and values, so the
 * prompt runs through the blocks once per group and each rollout's continuation reads the group's keys and
 * values: the same logits, with the prompt's share of the work divided by the group size.
 *
 * The head is UNTIED from the token embedding: a tied head needs h @ wte^T, a transposed product that is
 * ~10x slower on wasm (or an explicit transpose of wte every call), while an untied one is a plain matMul;
 * it also lets diagnostics read the output row of a control token (e.g. <|im_end|>) on its own. It costs
 * V x C extra parameters, small for our closed vocabulary.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../prng';
import { BlockParams, blockForward, CacheBias, decodeBlock, LayerKV } from './attention';
import { causalBias, prefixCausalBias } from './mask';
import { matMulNN } from './matmul';
import { GPTConfig, validateGPTConfig } from './config';
import { CacheLayer, DecodeWeights, KVCache } from './kvcache';
import { embed, gatherRows, GELU_DECODE_SCALES, layerNorm, linear, normLinear } from './layers';

/** Shared prefixes that a batch of continuations reads (GPT.prefixKV, GPT.forwardAt). */
export interface PrefixContext {
  /** Per layer, the prefixes' keys kT [G, H, hd, P] and values v [G, H, P, hd] (GPT.prefixKV). */
  kv: LayerKV[];
  /** [G] real tokens of each prefix (the rest of its P slots is padding). */
  lens: number[];
  /** [B] the prefix each row continues. */
  group: Int32Array;
}

/** How a parameter is initialised. */
type Init = 'normal' | 'residual' | 'zeros' | 'ones';

/** The ordered parameter list: names follow HF GPT-2, weights are [in, out]. */
function paramSpecs(cfg: GPTConfig): { name: string; shape: number[]; init: Init }[] {
  const C = cfg.nEmbd;
  const specs: { name: string; shape: number[]; init: Init }[] = [
    { name: 'wte.weight', shape: [cfg.vocabSize, C], init: 'normal' },
    { name: 'wpe.weight', shape: [cfg.blockSize, C], init: 'normal' },
  ];
  for (let l = 0; l < cfg.nLayer; l++) {
    const p = `h.${l}.`;
    specs.push(
      { name: p + 'ln_1.weight', shape: [C], init: 'ones' },
      { name: p + 'ln_1.bias', shape: [C], init: 'zeros' },
      { name: p + 'attn.c_attn.weight', shape: [C, 3 * C], init: 'normal' },
      { name: p + 'attn.c_attn.bias', shape: [3 * C], init: 'zeros' },
      { name: p + 'attn.c_proj.weight', shape: [C, C], init: 'residual' },
      { name: p + 'attn.c_proj.bias', shape: [C], init: 'zeros' },
      { name: p + 'ln_2.weight', shape: [C], init: 'ones' },
      { name: p + 'ln_2.bias', shape: [C], init: 'zeros' },
      { name: p + 'mlp.c_fc.weight', shape: [C, 4 * C], init: 'normal' },
      { name: p + 'mlp.c_fc.bias', shape: [4 * C], init: 'zeros' },
      { name: p + 'mlp.c_proj.weight', shape: [4 * C, C], init: 'residual' },
      { name: p + 'mlp.c_proj.bias', shape: [C], init: 'zeros' },
    );
  }
  specs.push(
    { name: 'ln_f.weight', shape: [C], init: 'ones' },
    { name: 'ln_f.bias', shape: [C], init: 'zeros' },
    { name: 'lm_head.weight', shape: [C, cfg.vocabSize], init: 'normal' },
  );
  return specs;
}

export class GPT {
  readonly config: GPTConfig;
  private readonly vars = new Map<string, tf.Variable>();
  private readonly blocks: BlockParams[] = [];
  private disposed = false;

  /**
   * Weights are drawn from Rng(seed) (never tf.random*), in the fixed parameter order, so the same seed
   * gives bit-identical weights on every backend. GPT-2 init: N(0, initStd) for weights and embeddings,
   * N(0, initStd / sqrt(2 nLayer)) for the projections into the residual stream, zero biases, unit LN gains.
   */
  constructor(cfg: GPTConfig, seed: number) {
    validateGPTConfig(cfg);
    this.config = { ...cfg };
    const rng = new Rng(seed);
    const residualStd = cfg.initStd / Math.sqrt(2 * cfg.nLayer);
    for (const s of paramSpecs(cfg)) {
      const size = s.shape.reduce((a, b) => a * b, 1);
      const data = new Float32Array(size);
      if (s.init === 'ones') data.fill(1);
      else if (s.init !== 'zeros') {
        const std = s.init === 'residual' ? residualStd : cfg.initStd;
        for (let i = 0; i < size; i++) data[i] = rng.normal() * std;
      }
      // No variable name: tfjs names must be globally unique and several models may coexist (policy + ref).
      this.vars.set(s.name, tf.tidy(() => tf.variable(tf.tensor(data, s.shape, 'float32'), true)));
    }
    for (let l = 0; l < cfg.nLayer; l++) {
      const g = (n: string) => this.vars.get(`h.${l}.${n}`)!;
      this.blocks.push({
        ln1g: g('ln_1.weight'), ln1b: g('ln_1.bias'),
        wqkv: g('attn.c_attn.weight'), bqkv: g('attn.c_attn.bias'),
        wproj: g('attn.c_proj.weight'), bproj: g('attn.c_proj.bias'),
        ln2g: g('ln_2.weight'), ln2b: g('ln_2.bias'),
        wfc: g('mlp.c_fc.weight'), bfc: g('mlp.c_fc.bias'),
        wfc2: g('mlp.c_proj.weight'), bfc2: g('mlp.c_proj.bias'),
      });
    }
  }

  /** Parameters in a stable order (name -> variable). The map is live: do not dispose its entries. */
  params(): Map<string, tf.Variable> {
    this.assertUsable();
    return this.vars;
  }

  /** Total number of scalar parameters. */
  numParams(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.size;
    return n;
  }

  private p(name: string): tf.Variable {
    return this.vars.get(name)!;
  }

  private assertUsable(): void {
    if (this.disposed) throw new Error('GPT: used after dispose()');
  }

  /** ids [B, T] int32 -> logits [B, T, V]. Differentiable w.r.t. params(); call inside tf.tidy / grads. */
  forward(ids: tf.Tensor2D): tf.Tensor3D {
    const [B, T] = ids.shape;
    return tf.tidy(() => tf.reshape(this.head(this.hidden(ids)), [B, T, this.config.vocabSize]) as tf.Tensor3D);
  }

  /**
   * Logits at chosen positions only: ids [B, T] int32, at [M] int32 flat indices b * T + t (distinct) ->
   * logits [M, V]. Every position still runs through the blocks (it is context), but the final LayerNorm
   * and the head, the largest product of the model (C x V per position), run only where a loss or a
   * log-prob is read: the trained tokens, a quarter of a multi-turn trajectory. Differentiable.
   *
   * With `prefix`, row b of ids is the continuation of prefix group[b]: its tokens sit at positions lens[group[b]]
   * onwards and attend to that prefix's keys and values (differentiable w.r.t. them too).
   */
  forwardAt(ids: tf.Tensor2D, at: tf.Tensor1D, prefix?: PrefixContext): tf.Tensor2D {
    return tf.tidy(() => this.head(gatherRows(this.hidden(ids, prefix), at)));
  }

  /**
   * Keys and values of every layer over shared prefixes: ids [G, P] int32, right-padded (padding slots are masked
   * by the continuations' bias) -> per layer kT [G, H, hd, P], v [G, H, P, hd]. Differentiable.
   */
  prefixKV(ids: tf.Tensor2D): LayerKV[] {
    // returned from the tidy (not tf.keep), so an enclosing scope such as a gradient tape still owns them
    return tf.tidy(() => {
      const kv: LayerKV[] = [];
      this.hidden(ids, undefined, kv);
      return kv as unknown as tf.TensorContainer;
    }) as unknown as LayerKV[];
  }

  /**
   * The blocks: ids [B, T] -> the residual stream [B*T, C] before the final LayerNorm. `prefix`: see forwardAt;
   * `kvOut` collects each block's keys and values.
   */
  private hidden(ids: tf.Tensor2D, prefix?: PrefixContext, kvOut?: LayerKV[]): tf.Tensor2D {
    this.assertUsable();
    const [B, T] = ids.shape;
    const { nEmbd: C, blockSize, nHead } = this.config;
    const tok = embed(this.p('wte.weight') as tf.Tensor2D, tf.reshape(ids, [B * T]) as tf.Tensor1D); // [B*T, C]
    let x: tf.Tensor3D; // [B, T, C]
    let bias: tf.Tensor4D;
    let rowKV = (_l: number): LayerKV | null => null;
    if (prefix === undefined) {
      if (T > blockSize) throw new Error(`GPT.forward: sequence length ${T} > blockSize ${blockSize}`);
      // Positions 0..T-1 are the same for every row: a slice of wpe (its gradient is a pad), broadcast over B.
      const pos = tf.slice(this.p('wpe.weight'), [0, 0], [T, C]); // [T, C]
      x = tf.add(tf.reshape(tok, [B, T, C]), pos) as tf.Tensor3D;
      bias = causalBias(T); // [1, 1, T, T]
    } else {
      const starts = Array.from(prefix.group, (g) => prefix.lens[g]); // [B] position of each row's first token
      const posIds = new Int32Array(B * T); // padding positions past the block size are clamped (never read)
      starts.forEach((s, b) => { for (let t = 0; t < T; t++) posIds[b * T + t] = Math.min(s + t, blockSize - 1); });
      const pos = embed(this.p('wpe.weight') as tf.Tensor2D, tf.tensor1d(posIds, 'int32')); // [B*T, C]
      x = tf.reshape(tf.add(tok, pos), [B, T, C]) as tf.Tensor3D;
      bias = prefixCausalBias(starts, prefix.kv[0].kT.shape[3], T); // [B, 1, T, P + T]
      rowKV = (l) => ({ kT: gatherGroups(prefix.kv[l].kT, prefix.group),
        v: gatherGroups(prefix.kv[l].v, prefix.group) });
    }
    this.blocks.forEach((bp, l) => {
      const out = blockForward(bp, x, nHead, bias, rowKV(l));
      x = out.x;
      if (kvOut) kvOut.push(out.kv);
    });
    return tf.reshape(x, [B * T, C]) as tf.Tensor2D;
  }

  /** Final LayerNorm and head: h [N, C] -> logits [N, V]. */
  private head(h: tf.Tensor2D): tf.Tensor2D {
    return linear(layerNorm(h, this.p('ln_f.weight'), this.p('ln_f.bias')), this.p('lm_head.weight'));
  }

  /**
   * An empty cache for decoding `batch` rows in parallel. Dispose it when done. The cache snapshots the
   * decode weights, computed once here instead of at every step (lib/model/kvcache.ts, DecodeWeights), so
   * make a new cache after the parameters change.
   */
  createCache(batch: number): KVCache {
    this.assertUsable();
    const C = this.config.nEmbd;
    const scale = 1 / Math.sqrt(C / this.config.nHead);
    const rootC = Math.sqrt(C);
    // LN(x) @ W + b = rsqrt(|xc|^2 + C eps) * (xc @ (sqrt(C) g[:, None] W)) + (beta @ W + b) (layers.ts, normLinear)
    const fold = (g: tf.Tensor, beta: tf.Tensor, w: tf.Tensor, b: tf.Tensor | null) => {
      const betaW = tf.reshape(tf.matMul(tf.reshape(beta, [1, C]), w), [-1]); // [out]
      return { w: tf.mul(tf.reshape(tf.mul(g, rootC), [C, 1]), w) as tf.Tensor2D,
        b: (b === null ? betaW : tf.add(betaW, b)) as tf.Tensor1D };
    };
    const gs = GELU_DECODE_SCALES;
    const weights: DecodeWeights[] = this.blocks.map((bp) => tf.tidy(() => {
      // 1/sqrt(hd) on the query columns, exactly 1 on the key and value columns
      const cols = tf.concat([tf.fill([C], scale), tf.ones([2 * C])]); // [3C]
      const qkv = fold(bp.ln1g, bp.ln1b, bp.wqkv, bp.bqkv);
      const fc = fold(bp.ln2g, bp.ln2b, bp.wfc, bp.bfc);
      return {
        wqkv: tf.mul(qkv.w, cols) as tf.Tensor2D, bqkv: tf.mul(qkv.b, cols) as tf.Tensor1D,
        wfc: tf.mul(fc.w, gs.input) as tf.Tensor2D, bfc: tf.mul(fc.b, gs.input) as tf.Tensor1D,
        wfc2: tf.mul(bp.wfc2, gs.output) as tf.Tensor2D,
      };
    }));
    const head = tf.tidy(() => fold(this.p('ln_f.weight'), this.p('ln_f.bias'), this.p('lm_head.weight'), null));
    const center = tf.tidy(() => tf.sub(tf.eye(C), 1 / C) as tf.Tensor2D); // [C, C]
    return new KVCache(batch, this.config.nLayer, weights, head, center);
  }

  /**
   * Feed each row its new tokens (ragged; an empty array is fine) and return logits [B, V] at each row's
   * LAST real token so far. A row with no new tokens gets the logits of its previous last token again (zeros
   * if it never had one), so finished rows can keep receiving []. The caller owns the returned tensor.
   *
   * All rows get n = max(len) new slots; shorter rows are padded with masked slots. The one-token decode
   * step touches old slots only through the attention read (Q_new @ K^T, att @ V).
   */
  append(cache: KVCache, tokens: number[][]): tf.Tensor2D {
    this.assertUsable();
    cache.assertUsable();
    const B = cache.batch;
    const { nEmbd: C, nHead, vocabSize: V, blockSize } = this.config;
    if (tokens.length !== B) throw new Error(`GPT.append: got ${tokens.length} token rows for a cache of batch ${B}`);
    const lens = tokens.map((r) => r.length);
    const n = Math.max(...lens);
    if (n === 0) return cache.lastLogits !== null ? cache.lastLogits.clone() : tf.zeros([B, V]);

    const ids = new Int32Array(B * n); // padding slots hold token 0 (masked anyway)
    for (let b = 0; b < B; b++) {
      for (let i = 0; i < lens[b]; i++) {
        const t = tokens[b][i];
        if (!Number.isInteger(t) || t < 0 ||
          t >= V) throw new Error(`GPT.append: row ${b} token ${i} = ${t} is not in [0, ${V})`);
        ids[b * n + i] = t;
      }
    }
    const posIds = cache.newPositions(lens, n, blockSize);
    const lastIdx = new Int32Array(B); // row b's last real new token within the flat [B*n] grid
    const hasNew = new Float32Array(B);
    for (let b = 0; b < B; b++) {
      lastIdx[b] = b * n + Math.max(lens[b] - 1, 0);
      hasNew[b] = lens[b] > 0 ? 1 : 0;
    }

    const merge = cache.mergesOn(n);
    const plan = merge ? cache.compaction(lens, n) : null;
    const out = tf.tidy(() => {
      // merge: one bias over every slot; else the cached frozen bias + a small one over the tail and the new slot
      const bias: CacheBias = merge
        ? { frozen: null, recent: cache.buildBias(lens, n), merge, twoLevel: cache.twoLevel, // [B, 1, n, S + n]
          keep: plan === null ? null : tf.tensor1d(flatKeep(plan.index, B, nHead, plan.slots, cache.length + n),
            'int32') }
        // [B, 1, n, t + n]
        : { frozen: cache.frozenBias, recent: cache.buildBias(lens, n, cache.frozenLength), merge, twoLevel: true,
          keep: null };
      // Inference only: plain gathers (bit-identical to the oneHot form the training gradient uses).
      const tok = tf.gather(this.p('wte.weight'), tf.tensor1d(ids, 'int32')); // [B*n, C]
      const pos = tf.gather(this.p('wpe.weight'), tf.tensor1d(posIds, 'int32')); // [B*n, C]
      let x = tf.add(tok, pos) as tf.Tensor2D; // [B*n, C], row-major over (row, slot)
      const layers: CacheLayer[] = [];
      this.blocks.forEach((bp, l) => {
        const r = decodeBlock(bp, cache.weights[l], cache.center!, x, B, nHead, cache.layers[l], bias);
        x = r.x;
        layers.push(r.next);
      });
      // Only each row's last token goes through the final LN and head (LN is per position, so this is exact).
      const last = n === 1 ? x : tf.gather(x, tf.tensor1d(lastIdx, 'int32')) as tf.Tensor2D; // [B, C]
      let logits = normLinear(last, cache.center!, cache.head!.w, cache.head!.b); // [B, V], ln_f folded into the head
      if (lens.some((l) => l === 0)) {
        const prev = cache.lastLogits ?? tf.zeros([B, V]);
        const keep = tf.tensor2d(hasNew, [B, 1]);
        logits = tf.add(tf.mul(logits, keep), tf.mul(prev, tf.sub(1, keep))) as tf.Tensor2D; // [B, V]
      }
      return { layers: layers as unknown as tf.TensorContainer, logits }; // tidy keeps every tensor in there
    });

    cache.install(out.layers as unknown as CacheLayer[], lens, n, merge, plan);
    if (cache.lastLogits !== null) cache.lastLogits.dispose();
    cache.lastLogits = out.logits;
    return out.logits.clone();
  }

  /** Free all weights. */
  dispose(): void {
    if (this.disposed) return;
    for (const v of this.vars.values()) v.dispose();
    this.vars.clear();
    this.disposed = true;
  }
}

/**
 * Row b of the result is t[group[b]]: t [G, ...] -> [B, ...]. The forward is a gather; the gradient, the sum of
 * each group's rows, a product with the one-hot [G, B] (tf.gather's own gradient needs UnsortedSegmentSum, which
 * wasm lacks; and wasm's matMul caches packed operands by tensor id, so a one-hot product in the forward read a
 * stale packing of t's reshaped keys: wrong values, measured).
 */
function gatherGroups(t: tf.Tensor4D, group: Int32Array): tf.Tensor4D {
  const [G, a, b, c] = t.shape;
  const pickT = new Float32Array(G * group.length); // [G, B] one-hot
  group.forEach((g, r) => { pickT[g * group.length + r] = 1; });
  const rows = tf.customGrad(((flat: tf.Tensor, save: tf.GradSaveFunc) => {
    save([]);
    return {
      value: tf.gather(flat, tf.tensor1d(group, 'int32')), // [B, a*b*c]
      gradFunc: (dy: tf.Tensor) => [matMulNN(tf.tensor2d(pickT, [G, group.length]), dy)], // [G, a*b*c]
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (flat: tf.Tensor) => tf.Tensor;
  return tf.reshape(rows(tf.reshape(t, [G, a * b * c])), [group.length, a, b, c]) as tf.Tensor4D;
}

/** Per-row kept slots [B * F] -> row indices [B * H * F] into values flattened to [B * H * S, hd]. */
function flatKeep(index: Int32Array, B: number, H: number, F: number, S: number): Int32Array {
  const out = new Int32Array(B * H * F);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const base = (b * H + h) * S;
      for (let f = 0; f < F; f++) out[(b * H + h) * F + f] = base + index[b * F + f];
    }
  }
  return out;
}
