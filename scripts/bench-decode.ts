/**
 * Is a decoder outside tfjs faster for a model this small? One KV-cache decode pass of the default GPT
 * (d64 x 2 layers x 2 heads) through tfjs (GPT.append: ~100 kernels per pass) against the same pass written as plain
 * loops over Float32Arrays, for several batch sizes B and cache lengths S. It first checks that both compute the
 * same logits, so the loop version is the model, not a sketch of it. Figures: docs/backends.md.
 *
 *   node --import tsx scripts/bench-decode.ts [--backend tensorflow|wasm|cpu] [--profile]
 *
 * --profile adds tf.profile's kernel times of a tfjs pass at B 256, S 400 (the start of a 32 x 8 GRPO rollout).
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend, BackendName } from '../lib/backend';
import { GPT } from '../lib/model/gpt';
import { defaultGPTConfig } from '../lib/model/config';
import { LN_EPS } from '../lib/model/layers';

/** LayerNorm of one row x [C] into out [C]. */
function layerNorm(x: Float32Array, g: Float32Array, b: Float32Array, out: Float32Array): void {
  const C = x.length;
  let mean = 0;
  for (let i = 0; i < C; i++) mean += x[i];
  mean /= C;
  let v = 0;
  for (let i = 0; i < C; i++) v += (x[i] - mean) * (x[i] - mean);
  const r = 1 / Math.sqrt(v / C + LN_EPS);
  for (let i = 0; i < C; i++) out[i] = (x[i] - mean) * r * g[i] + b[i];
}

/** out [nOut] = x [nIn] @ W [nIn, nOut] + b (row-major W: the inner loop runs along a contiguous row). */
function linear(x: Float32Array, W: Float32Array, b: Float32Array | null, out: Float32Array): void {
  const nOut = out.length;
  if (b) out.set(b);
  else out.fill(0);
  for (let i = 0; i < x.length; i++) {
    const xi = x[i];
    const row = i * nOut;
    for (let j = 0; j < nOut; j++) out[j] += xi * W[row + j];
  }
}

/** The GPT's decode pass as loops: one row after the other, keys and values in per-row caches [B, H, maxS, hd]. */
class LoopDecoder {
  private w = new Map<string, Float32Array>();
  private keys: Float32Array[] = [];
  private values: Float32Array[] = [];
  readonly len: Int32Array; // [B] tokens in each row's cache

  constructor(private model: GPT, B: number, private maxS: number) {
    const { nLayer, nHead, nEmbd } = model.config;
    for (const [k, v] of model.params()) this.w.set(k, v.dataSync() as Float32Array);
    for (let l = 0; l < nLayer; l++) {
      this.keys.push(new Float32Array(B * nHead * maxS * (nEmbd / nHead)));
      this.values.push(new Float32Array(B * nHead * maxS * (nEmbd / nHead)));
    }
    this.len = new Int32Array(B);
  }

  private p(name: string): Float32Array {
    return this.w.get(name)!;
  }

  /** Append one token per row; logits [B * V] of the new positions. */
  step(tokens: number[], logits: Float32Array): void {
    const { nLayer, nHead: H, nEmbd: C, vocabSize: V } = this.model.config;
    const hd = C / H;
    const x = new Float32Array(C), h = new Float32Array(C), qkv = new Float32Array(3 * C), y = new Float32Array(C);
    const f = new Float32Array(4 * C), o = new Float32Array(C), att = new Float32Array(this.maxS);
    const scale = 1 / Math.sqrt(hd);
    tokens.forEach((token, b) => {
      const pos = this.len[b];
      const wte = this.p('wte.weight'), wpe = this.p('wpe.weight');
      for (let i = 0; i < C; i++) x[i] = wte[token * C + i] + wpe[pos * C + i];
      for (let l = 0; l < nLayer; l++) {
        const n = `h.${l}.`;
        layerNorm(x, this.p(n + 'ln_1.weight'), this.p(n + 'ln_1.bias'), h);
        linear(h, this.p(n + 'attn.c_attn.weight'), this.p(n + 'attn.c_attn.bias'), qkv); // [q | k | v]
        const K = this.keys[l], Vc = this.values[l];
        for (let head = 0; head < H; head++) {
          const base = (b * H + head) * this.maxS * hd;
          for (let d = 0; d < hd; d++) {
            K[base + pos * hd + d] = qkv[C + head * hd + d];
            Vc[base + pos * hd + d] = qkv[2 * C + head * hd + d];
          }
          let max = -Infinity;
          for (let s = 0; s <= pos; s++) {
            let a = 0;
            for (let d = 0; d < hd; d++) a += qkv[head * hd + d] * K[base + s * hd + d];
            att[s] = a * scale;
            max = Math.max(max, att[s]);
          }
          let z = 0;
          for (let s = 0; s <= pos; s++) z += (att[s] = Math.exp(att[s] - max));
          for (let d = 0; d < hd; d++) y[head * hd + d] = 0;
          for (let s = 0; s <= pos; s++) {
            for (let d = 0; d < hd; d++) y[head * hd + d] += (att[s] / z) * Vc[base + s * hd + d];
          }
        }
        linear(y, this.p(n + 'attn.c_proj.weight'), this.p(n + 'attn.c_proj.bias'), o);
        for (let i = 0; i < C; i++) x[i] += o[i];
        layerNorm(x, this.p(n + 'ln_2.weight'), this.p(n + 'ln_2.bias'), h);
        linear(h, this.p(n + 'mlp.c_fc.weight'), this.p(n + 'mlp.c_fc.bias'), f);
        for (let i = 0; i < 4 * C; i++) f[i] = 0.5 * f[i] * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (f[i] + 0.044715 * f[i] ** 3))); // GELU (tanh)
        linear(f, this.p(n + 'mlp.c_proj.weight'), this.p(n + 'mlp.c_proj.bias'), o);
        for (let i = 0; i < C; i++) x[i] += o[i];
      }
      layerNorm(x, this.p('ln_f.weight'), this.p('ln_f.bias'), h);
      linear(h, this.p('lm_head.weight'), null, logits.subarray(b * V, (b + 1) * V));
      this.len[b] = pos + 1;
    });
  }
}

async function main(): Promise<void> {
  const i = process.argv.indexOf('--backend');
  const backend = await initBackend({ backend: i > 0 ? (process.argv[i + 1] as BackendName) : undefined, verbose: false });
  const model = new GPT({ ...defaultGPTConfig(1247, {}), blockSize: 1024 }, 7);
  const V = model.config.vocabSize;
  const tokensOf = (B: number, T: number) => Array.from({ length: B }, (_, b) => Array.from({ length: T }, (_, t) => (b * 31 + t * 7) % V));
  // the same model? 3 rows of 20 tokens, one at a time through the loops, at once through tfjs
  const ids = tokensOf(3, 20);
  const loops = new LoopDecoder(model, 3, 20);
  const mine = new Float32Array(3 * V);
  for (let t = 0; t < 20; t++) loops.step(ids.map((r) => r[t]), mine);
  const cache = model.createCache(3);
  const out = model.append(cache, ids);
  const ref = out.dataSync();
  let diff = 0;
  ref.forEach((r, k) => { diff = Math.max(diff, Math.abs(r - mine[k])); });
  out.dispose();
  cache.dispose();
  console.log(`${backend}: max |logit difference| loops vs tfjs over 3 rows x ${V}: ${diff.toExponential(1)}`);
  console.log('cache S  rows B  tfjs ms/pass  loops ms/pass');
  for (const S of [200, 400]) {
    for (const B of [1, 4, 16, 64, 256]) {
      const next = Array.from({ length: B }, (_, b) => [b % V]);
      const c = model.createCache(B);
      model.append(c, tokensOf(B, S)).dispose();
      const pass = () => { const lg = model.append(c, next); lg.dataSync(); lg.dispose(); };
      pass(); // warm-up
      const n = 20;
      let t0 = performance.now();
      for (let k = 0; k < n; k++) pass();
      const tfMs = (performance.now() - t0) / n;
      c.dispose();
      const dec = new LoopDecoder(model, B, S + 30);
      dec.len.fill(S);
      const logits = new Float32Array(B * V);
      const m = B >= 64 ? 3 : n;
      t0 = performance.now();
      for (let k = 0; k < m; k++) dec.step(next.map((r) => r[0]), logits);
      const loopMs = (performance.now() - t0) / m;
      console.log(`${String(S).padStart(7)}  ${String(B).padStart(6)}  ${tfMs.toFixed(2).padStart(12)}  ${loopMs.toFixed(2).padStart(13)}`);
    }
  }
  if (process.argv.includes('--profile')) await profilePass(model, tokensOf(256, 400));
  model.dispose();
}

/** The kernels of one tfjs decode pass over `prompt` rows, by total time over 5 passes. */
async function profilePass(model: GPT, prompt: number[][]): Promise<void> {
  const c = model.createCache(prompt.length);
  model.append(c, prompt).dispose();
  const next = prompt.map((_, b) => [b]);
  const pass = () => { const lg = model.append(c, next); lg.dataSync(); lg.dispose(); };
  pass();
  const byKernel = new Map<string, number>();
  const P = 5;
  for (let k = 0; k < P; k++) {
    const info = await tf.profile(pass);
    for (const kern of info.kernels) {
      const key = `${kern.name} ${JSON.stringify(kern.inputShapes)}`;
      byKernel.set(key, (byKernel.get(key) ?? 0) + Number(kern.kernelTimeMs) / P);
    }
  }
  c.dispose();
  const rows = [...byKernel.entries()].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((a, r) => a + r[1], 0);
  console.log(`one pass at B ${prompt.length}, S ${prompt[0].length}: ${total.toFixed(2)} ms of kernel time; the largest:`);
  for (const [key, ms] of rows.slice(0, 8)) console.log(`  ${ms.toFixed(2)} ms  ${key}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
