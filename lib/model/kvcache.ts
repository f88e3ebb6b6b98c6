/**
 * A batched KV cache for multi-turn rollouts whose rows sit at different positions.
 *
 * The cache is a grid of "slots": every append adds the same number n of slots to every row (tensors stay
 * rectangular), but a row with fewer than n new tokens fills the rest with padding slots that are masked out
 * of attention forever. So each row keeps
 *   - a validity mask over slots (which slots hold real tokens), and
 *   - its own position counter: the positional embedding of a token is its position in that row's sequence,
 *     never its slot index.
 * With this, "row 3 got a 40-token observation while row 5 decoded one token" is a single append call, and a
 * row's attention sees exactly its own real tokens in order, as the training forward does.
 *
 * Memory grows by n slots per append; padding slots are never reclaimed (no compaction): rollouts are short
 * (a few hundred slots) and a fresh cache is made per rollout batch.
 */
import * as tf from '@tensorflow/tfjs';
import { LayerKV, MASK_VALUE } from './attention';

export class KVCache {
  /** Rows (episodes decoded in parallel). */
  readonly batch: number;
  /** Per layer K/V over all slots so far, or null before the first append. */
  layers: (LayerKV | null)[];
  /** valid[b][s] = 1 when slot s of row b holds a real token. */
  private valid: Uint8Array[];
  private slots = 0;
  private pos: number[];
  /** Logits [B, V] at each row's last real token (null before any token arrived). Owned by the cache. */
  lastLogits: tf.Tensor2D | null = null;
  private disposed = false;

  constructor(batch: number, nLayer: number) {
    if (!Number.isInteger(batch) || batch < 1) throw new Error(`KVCache: batch must be a positive integer, got ${batch}`);
    this.batch = batch;
    this.layers = new Array(nLayer).fill(null);
    this.valid = [];
    for (let b = 0; b < batch; b++) this.valid.push(new Uint8Array(64));
    this.pos = new Array(batch).fill(0);
  }

  /** Number of slots (real + padding) held per row. */
  get length(): number {
    return this.slots;
  }

  /** Per row: number of real tokens seen so far = position of that row's next token. */
  get positions(): number[] {
    return this.pos.slice();
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  assertUsable(): void {
    if (this.disposed) throw new Error('KVCache: used after dispose()');
  }

  /**
   * Additive attention bias for appending `lens[b]` real tokens (padded to n slots) to every row:
   * [B, 1, n, S + n]. Query i of row b may read old slot j if it is valid, and new slot S + j' if
   * j' <= i (causal) and j' < lens[b] (real). Queries on padding slots get some harmless pattern; their
   * outputs are never used and their slots are marked invalid.
   */
  buildBias(lens: number[], n: number): tf.Tensor4D {
    const B = this.batch;
    const S = this.slots;
    const W = S + n;
    const data = new Float32Array(B * n * W);
    for (let b = 0; b < B; b++) {
      const valid = this.valid[b];
      for (let i = 0; i < n; i++) {
        const row = (b * n + i) * W;
        for (let j = 0; j < S; j++) if (valid[j] === 0) data[row + j] = MASK_VALUE;
        for (let jj = 0; jj < n; jj++) if (jj > i || jj >= lens[b]) data[row + S + jj] = MASK_VALUE;
      }
    }
    return tf.tensor4d(data, [B, 1, n, W]);
  }

  /** Position ids [B * n] for the new slots (padding slots reuse the row's last real position, clamped). */
  newPositions(lens: number[], n: number, blockSize: number): Int32Array {
    const out = new Int32Array(this.batch * n);
    for (let b = 0; b < this.batch; b++) {
      const end = this.pos[b] + lens[b];
      if (end > blockSize) {
        throw new Error(`KVCache: row ${b} would reach position ${end} > blockSize ${blockSize}; ` +
          'raise GPTConfig.blockSize or shorten the episode');
      }
      for (let i = 0; i < n; i++) out[b * n + i] = Math.min(this.pos[b] + i, Math.max(end - 1, 0), blockSize - 1);
    }
    return out;
  }

  /** Record that n slots were added, the first lens[b] of them real in row b. Call after the tensors are in. */
  commit(lens: number[], n: number): void {
    const need = this.slots + n;
    for (let b = 0; b < this.batch; b++) {
      let v = this.valid[b];
      if (v.length < need) {
        const grown = new Uint8Array(Math.max(need, v.length * 2));
        grown.set(v);
        v = this.valid[b] = grown;
      }
      for (let i = 0; i < lens[b]; i++) v[this.slots + i] = 1;
      this.pos[b] += lens[b];
    }
    this.slots = need;
  }

  /** Free every tensor the cache holds. Safe to call twice. */
  dispose(): void {
    if (this.disposed) return;
    for (const kv of this.layers) {
      if (kv !== null) {
        kv.k.dispose();
        kv.v.dispose();
      }
    }
    this.layers = this.layers.map(() => null);
    if (this.lastLogits !== null) this.lastLogits.dispose();
    this.lastLogits = null;
    this.disposed = true;
  }
}
