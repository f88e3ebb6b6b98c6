/**
 * A small seeded pseudo-random generator of our own (mulberry32 state update, splitmix32 seeding).
 *
 * Every random choice in the project (task generation, sampling, shuffling, weight init) goes through
 * an Rng, so a run is a pure function of its seed. tfjs's own seeded ops treat seed 0 as "random",
 * which is one reason we never hand seeds to tfjs.
 */
/** Seeds a run accepts: integers in [0, SEED_MAX] (written in decimal on the command line). */
export const SEED_MAX = 2 ** 32 - 1;

/** Throws naming `what` unless `seed` is an integer in [0, SEED_MAX]. */
export function checkSeed(seed: unknown, what = 'seed'): number {
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > SEED_MAX) {
    throw new Error(`${what} must be an integer in [0, ${SEED_MAX}], got ` +
      `${typeof seed === 'string' ? JSON.stringify(seed) : seed}`);
  }
  return seed;
}

export class Rng {
  private state: number;

  /**
   * `seed`: any safe integer. Seeds that fit in 32 bits (as uint32 or int32: -2^31 .. 2^32 - 1) are mixed exactly
   * as they always were, so committed results keep their streams; above that the high word is mixed in as
   * well, so 2^32 + 1 and 1 give unrelated streams instead of the same one.
   */
  constructor(seed: number) {
    if (!Number.isSafeInteger(seed)) throw new Error(`Rng: seed must be a safe integer, got ${seed}`);
    // splitmix32 scramble so that nearby seeds (0, 1, 2...) give unrelated streams.
    const hi = Math.floor(seed / 4294967296); // seed = hi * 2^32 + lo, both exact for a safe integer
    const lo = seed - hi * 4294967296;
    let z = (lo + 0x9e3779b9) | 0;
    if (seed < -0x80000000 || seed > 0xffffffff) {
      const h = hi | 0; // |hi| < 2^21
      z = Math.imul(z ^ Math.imul(h ^ (h >>> 16), 0x7feb352d), 0x846ca68b) ^ 0x5bd1e995;
    }
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    this.state = (z ^ (z >>> 16)) >>> 0;
  }

  /** The generator's whole state, for checkpoints (resume continues the exact same stream). */
  getState(): number {
    return this.state;
  }

  setState(state: number): void {
    this.state = state >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi] (both inclusive). */
  int(lo: number, hi: number): number {
    if (hi < lo) throw new Error(`Rng.int: empty range [${lo}, ${hi}]`);
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty array');
    return items[Math.floor(this.next() * items.length)];
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Standard normal sample (Box-Muller). */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** A new array with the elements in random order (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const tmp = out[i];
      out[i] = out[j];
      out[j] = tmp;
    }
    return out;
  }

  /** k distinct elements (k <= length), in random order. */
  sample<T>(items: readonly T[], k: number): T[] {
    if (k > items.length) throw new Error(`Rng.sample: k=${k} > ${items.length}`);
    return this.shuffle(items).slice(0, k);
  }

  /** An independent generator derived from this one (for sub-streams that must not shift each other). */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 4294967296));
  }

  /** Index drawn from unnormalised non-negative weights. */
  categorical(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i];
    if (!(total > 0)) throw new Error('Rng.categorical: weights sum to zero');
    let u = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i];
      if (u < 0) return i;
    }
    return weights.length - 1;
  }
}

/** A stable 32-bit hash of a string (FNV-1a), for deriving seeds from names. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
