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
 * Two-level layout (why: tfjs tensors are immutable, so "append a slot" means a copy; growing one tensor per
 * token copied the whole cache per layer per token, ~40% of a decode step at a few hundred slots):
 *   - frozen:  the old slots, keys stored TRANSPOSED kT [B, H, hd, F] (so the decode read q @ kT is a plain
 *              matMul, ~4x faster than q @ k^T with transposeB on tensorflow) and values v [B, H, F, hd],
 *              plus their attention bias [B, 1, 1, F] (0 / MASK_VALUE), built once per merge;
 *   - tail:    the latest slots, k and v [B, H, t, hd] with t <= TAIL_SLOTS, grown per append (a small
 *              copy) and folded into frozen when it would overflow (one big copy per TAIL_SLOTS slots).
 * An append longer than the tail's room (a prompt) merges everything into frozen at once. A merge copies every
 * slot anyway, so it also drops the padding slots (compaction): the cache then holds at most
 * max_b(real tokens of row b) + TAIL_SLOTS slots instead of growing by n slots per append for every row.
 *
 * Rows leave too (`retain`): a multi-turn rollout's episodes end at very different times (measured on the
 * base policy, 16 tasks x 8: the mean pass had 43 of 128 rows still running, half the passes 23 or fewer),
 * and a finished row would otherwise be read by every later attention pass. Dropping it is one gather of
 * the cache along the batch axis. The same gather copies rows: the rollouts of a group read one prompt, once.
 */
import * as tf from '@tensorflow/tfjs';
import { MASK_VALUE } from './mask';

/** One-token slots kept in the tail before it is folded into the frozen part. */
export const TAIL_SLOTS = 32;

/**
 * The two-level layout pays off where a batched matMul is fast and a copy is not (tensorflow, cpu). On wasm a
 * rank-4 matMul runs a slow generic loop (~0.7 GFLOP/s), so the two extra products of the two-level read cost
 * more than the copy they avoid (measured: 16 vs 12 ms per decode step, batch 64): there the cache keeps the
 * single-level layout, keys k [B, H, S, hd] grown by concat on axis 2 at every append (every append merges).
 */
export function twoLevelCache(): boolean {
  return tf.getBackend() !== 'wasm';
}

/** One layer's cached keys and values (see the file comment for the layout). */
export interface CacheLayer {
  keys: tf.Tensor4D | null; // two-level: kT [B, H, hd, F]; single-level (wasm): k [B, H, F, hd]
  v: tf.Tensor4D | null; // [B, H, F, hd]
  tailK: tf.Tensor4D | null; // [B, H, t, hd]
  tailV: tf.Tensor4D | null; // [B, H, t, hd]
}

/** Which slots survive a merge (see KVCache.compaction). */
export interface CompactionPlan {
  /** [B * F] slot indices (over the old slots + the new ones), row-major. */
  index: Int32Array;
  /** F: slots per row after the merge. */
  slots: number;
  /** Real slots per row (the first counts[b] of row b). */
  counts: number[];
}

/**
 * Per layer decode weights, derived once per cache from the live parameters (see GPT.createCache), so a
 * decode step runs fewer ops (lib/model/layers.ts, normLinear and geluUnscaled): each LayerNorm's gain and bias
 * folded into the linear layer after it, times sqrt(C); 1/sqrt(hd) in the query columns; sqrt(2/pi) in the
 * first MLP layer and 0.5/sqrt(2/pi) in the second (the GELU's constants).
 */
export interface DecodeWeights {
  /** [C, 3C], [3C]: ln_1 and the query scale folded into the fused QKV weight. */
  wqkv: tf.Tensor2D;
  bqkv: tf.Tensor1D;
  /** [C, 4C], [4C]: ln_2 and the GELU's input scale folded into the MLP's first layer. */
  wfc: tf.Tensor2D;
  bfc: tf.Tensor1D;
  /** [4C, C]: the MLP's second layer times the GELU's output scale (its bias is the parameter's). */
  wfc2: tf.Tensor2D;
}

export class KVCache {
  /** Rows decoded in parallel (shrinks when `retain` drops finished ones). */
  private rows: number;
  /** Per layer frozen + tail keys / values. Replaced, never mutated, by `install`. */
  layers: CacheLayer[];
  /** Attention bias [B, 1, 1, F] of the frozen slots, or null while there are none. */
  frozenBias: tf.Tensor4D | null = null;
  /** Layout, fixed at creation from the backend (twoLevelCache). */
  readonly twoLevel = twoLevelCache();
  /** Decode weights per layer (owned by the cache; a cache must not outlive a weight update). */
  readonly weights: DecodeWeights[];
  /** ln_f folded into the head: w [C, V], b [V] (owned by the cache), or null. */
  readonly head: { w: tf.Tensor2D; b: tf.Tensor1D } | null;
  /** I - 11^T / C [C, C], the centring of every folded LayerNorm (owned by the cache), or null. */
  readonly center: tf.Tensor2D | null;
  /** valid[b][s] = 1 when slot s of row b holds a real token. */
  private valid: Uint8Array[];
  private slots = 0;
  private frozen = 0;
  private pos: number[];
  /** Logits [B, V] at each row's last real token (null before any token arrived). Owned by the cache. */
  lastLogits: tf.Tensor2D | null = null;
  private disposed = false;

  constructor(batch: number, nLayer: number, weights: DecodeWeights[] = [],
    head: { w: tf.Tensor2D; b: tf.Tensor1D } | null = null,
    center: tf.Tensor2D | null = null) {
    if (!Number.isInteger(batch) ||
      batch < 1) throw new Error(`KVCache: batch must be a positive integer, got ${batch}`);
    this.rows = batch;
    this.layers = Array.from({ length: nLayer }, () => ({ keys: null, v: null, tailK: null, tailV: null }));
    this.weights = weights;
    this.head = head;
    this.center = center;
    this.valid = [];
    for (let b = 0; b < batch; b++) this.valid.push(new Uint8Array(64));
    this.pos = new Array(batch).fill(0);
  }

  /** Rows (episodes decoded in parallel). */
  get batch(): number {
    return this.rows;
  }

  /** Number of slots (real + padding) held per row. */
  get length(): number {
    return this.slots;
  }

  /** Slots in the frozen part (the rest, length - frozenLength, are in the tail). */
  get frozenLength(): number {
    return this.frozen;
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

  /** Will an append of n slots fold everything into the frozen part (the tail would pass TAIL_SLOTS)? */
  mergesOn(n: number): boolean {
    return !this.twoLevel || this.slots - this.frozen + n > TAIL_SLOTS;
  }

  /**
   * Additive bias over slots [from, S) plus n new ones, for appending `lens[b]` real tokens (padded to n
   * slots) to every row: [B, 1, n, S - from + n]. Query i of row b may read old slot j if it is valid, and
   * new slot S + j' if j' <= i (causal) and j' < lens[b] (real). Queries on padding slots get some harmless
   * pattern; their outputs are never used and their slots are marked invalid.
   */
  buildBias(lens: number[], n: number, from = 0): tf.Tensor4D {
    const B = this.batch;
    const S = this.slots;
    const W = S - from + n;
    const data = new Float32Array(B * n * W);
    for (let b = 0; b < B; b++) {
      const valid = this.valid[b];
      for (let i = 0; i < n; i++) {
        const row = (b * n + i) * W - from;
        for (let j = from; j < S; j++) if (valid[j] === 0) data[row + j] = MASK_VALUE;
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

  /**
   * For a merging append of `lens` real tokens in n slots: which slots each row keeps in the new frozen part.
   * Merging copies every slot anyway, so it also drops the padding slots (compaction): row b keeps its
   * real slots in order, then repeats its first slot up to the longest row's count (masked). Slot order
   * within a row never mattered (positions are per row), so attention sees the same keys. Returns the
   * gather indices [B, F] over the S + n slots, or null when that would drop less than a quarter of them.
   */
  compaction(lens: number[], n: number): CompactionPlan | null {
    const S = this.slots;
    const counts = lens.map((l, b) => {
      let c = l;
      for (let j = 0; j < S; j++) c += this.valid[b][j];
      return c;
    });
    const F = Math.max(1, ...counts);
    // compaction costs a few more copies of the cache: only when it drops at least a quarter of the slots
    if (F > 0.75 * (S + n)) return null;
    const index = new Int32Array(this.batch * F);
    for (let b = 0; b < this.batch; b++) {
      let k = 0;
      for (let j = 0; j < S; j++) if (this.valid[b][j] === 1) index[b * F + k++] = j;
      for (let i = 0; i < lens[b]; i++) index[b * F + k++] = S + i;
      // the rest stay 0: a copy of slot 0, masked by the new validity
    }
    return { index, slots: F, counts };
  }

  /**
   * Swap in the layers computed by an append (tensors kept out of its tidy) and free the old ones; `merged`
   * says whether every slot is now frozen (then the frozen bias is rebuilt). Then record that n slots were
   * added, the first lens[b] of them real in row b.
   */
  install(layers: CacheLayer[], lens: number[], n: number, merged: boolean, plan: CompactionPlan | null = null): void {
    const keep = new Set<tf.Tensor>();
    for (const l of layers) for (const t of [l.keys, l.v, l.tailK, l.tailV]) if (t !== null) keep.add(t);
    for (const l of this.layers) for (const t of [l.keys, l.v, l.tailK, l.tailV]) if (t !== null &&
      !keep.has(t)) t.dispose();
    this.layers = layers;
    this.commit(lens, n);
    if (plan !== null) {
      for (let b = 0; b < this.batch; b++) {
        this.valid[b].fill(0);
        this.valid[b].fill(1, 0, plan.counts[b]);
      }
      this.slots = plan.slots;
    }
    if (merged) {
      this.frozen = this.slots;
      this.rebuildFrozenBias();
    }
  }

  /** The bias a query sees over the frozen slots: only validity matters (every frozen slot is in its past). */
  private rebuildFrozenBias(): void {
    if (!this.twoLevel) return; // the single-level read builds its bias over every slot each time
    if (this.frozenBias !== null) this.frozenBias.dispose();
    const S = this.frozen;
    const data = new Float32Array(this.batch * S);
    for (let b = 0; b < this.batch; b++) for (let j = 0; j < S; j++) if (this.valid[b][j] === 0) data[b * S + j] =
      MASK_VALUE;
    this.frozenBias = tf.tensor4d(data, [this.batch, 1, 1, S]);
  }

  /**
   * Forget the last `k` real tokens of row `b`: their slots are masked from now on and the row's next token takes
   * the position of the first of them, as if they had never been read (a message re-tokenised after it was read:
   * lib/train/pipeline.ts, E2). The keys of the other rows, and every tensor, stay as they are.
   */
  forget(b: number, k: number): void {
    this.assertUsable();
    if (!(Number.isInteger(k) && k >= 0 &&
      k <= this.pos[b])) throw new Error(`KVCache.forget: row ${b} holds ${this.pos[b]} tokens, not ${k}`);
    let left = k;
    let frozenHit = false;
    for (let j = this.slots - 1; j >= 0 && left > 0; j--) {
      if (this.valid[b][j] === 0) continue;
      this.valid[b][j] = 0;
      if (j < this.frozen) frozenHit = true;
      left--;
    }
    this.pos[b] -= k;
    if (frozenHit) this.rebuildFrozenBias();
  }

  /** Record that n slots were added, the first lens[b] of them real in row b. */
  private commit(lens: number[], n: number): void {
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

  /**
   * Keep only the rows `keep` (indices into the current rows, in the order given; at least one): row i of
   * the cache afterwards is old row keep[i]. Every slot tensor, the frozen bias and the last logits are
   * gathered along the batch axis; positions and validity follow their rows. A row may be kept several times
   * (copies that go on separately: rollouts that read the same prompt, lib/train/rollout.ts).
   */
  retain(keep: number[]): void {
    this.assertUsable();
    if (keep.length === 0) throw new Error('KVCache.retain: keep at least one row');
    for (const r of keep) {
      if (!Number.isInteger(r) || r < 0 ||
        r >= this.rows) throw new Error(`KVCache.retain: row ${r} is not in [0, ${this.rows})`);
    }
    const idx = tf.tensor1d(keep, 'int32');
    const take = <T extends tf.Tensor | null>(t: T): T => {
      if (t === null) return t;
      const out = tf.gather(t as tf.Tensor, idx, 0) as T;
      (t as tf.Tensor).dispose();
      return out;
    };
    this.layers = this.layers.map((l) => ({ keys: take(l.keys), v: take(l.v), tailK: take(l.tailK),
      tailV: take(l.tailV) }));
    this.frozenBias = take(this.frozenBias);
    this.lastLogits = take(this.lastLogits);
    idx.dispose();
    this.valid = keep.map((r) => this.valid[r].slice()); // a copy each: kept twice, a row's copies diverge
    this.pos = keep.map((r) => this.pos[r]);
    this.rows = keep.length;
  }

  /** Free every tensor the cache holds. Safe to call twice. */
  dispose(): void {
    if (this.disposed) return;
    for (const l of this.layers) for (const t of [l.keys, l.v, l.tailK, l.tailV]) if (t !== null) t.dispose();
    this.layers = this.layers.map(() => ({ keys: null, v: null, tailK: null, tailV: null }));
    for (const w of this.weights) tf.dispose([w.wqkv, w.bqkv, w.wfc, w.bfc, w.wfc2]);
    if (this.head !== null) tf.dispose([this.head.w, this.head.b]);
    if (this.center !== null) this.center.dispose();
    if (this.frozenBias !== null) this.frozenBias.dispose();
    this.frozenBias = null;
    if (this.lastLogits !== null) this.lastLogits.dispose();
    this.lastLogits = null;
    this.disposed = true;
  }
}
