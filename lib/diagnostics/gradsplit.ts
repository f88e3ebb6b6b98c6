/**
 * The logit-gradient split (docs/design.md A.5). For a trained token x_t with advantage A, the policy-gradient
 * objective A * log p(x_t) pushes every logit k by
 *     A * (1[k = x_t] - p_k)
 * which splits into a "self" part on the sampled token, A * (1 - p_{x_t}), and an "other" part, -A * p_k,
 * on every token that was NOT sampled. With a negative advantage the mass taken off the sampled token
 * flows to all the others in proportion to their probability: a control token that is rarely sampled but
 * holds some probability keeps receiving "other" pushes and can spike.
 *
 * We report, for each probe token k, both parts summed over the probe positions of a step (the positions
 * right after an assistant message opens with `<tool_call>`), as the official code sums them. The sum of
 * the two is the objective's gradient on logit k (at ratio 1, before clipping, without the 1/N of the
 * token mean); the unit test checks it against autograd.
 */

export interface SplitInput {
  /** Probabilities of the probe tokens at each probe position: probs[i][k]. */
  probs: number[][];
  /** The token actually sampled at each probe position. */
  sampled: number[];
  /** The advantage of the trajectory each position belongs to. */
  advantages: number[];
  /** The probe token ids, aligned with probs' columns. */
  tokenIds: number[];
}

export interface SplitResult {
  /** self[k] = sum over positions where x_t = k of A * (1 - p_k). */
  self: number[];
  /** other[k] = sum over positions where x_t != k of -A * p_k. */
  other: number[];
  /** Number of probe positions. */
  positions: number;
}

export function gradientSplit(inp: SplitInput): SplitResult {
  const K = inp.tokenIds.length;
  const self = new Array<number>(K).fill(0);
  const other = new Array<number>(K).fill(0);
  for (let i = 0; i < inp.sampled.length; i++) {
    const A = inp.advantages[i];
    for (let k = 0; k < K; k++) {
      const p = inp.probs[i][k];
      if (inp.sampled[i] === inp.tokenIds[k]) self[k] += A * (1 - p);
      else other[k] += -A * p;
    }
  }
  return { self, other, positions: inp.sampled.length };
}

/**
 * The same split for the token that is most likely at each probe position outside the three probe tokens
 * (`tops[i]`, per position): where the mass goes when neither control token rises. Sums the push on each
 * position's own top-other token; `id` is the most frequent of them (null without positions).
 */
export function topOtherSplit(sampled: number[], advantages: number[], tops: { id: number; p: number }[]):
  { id: number | null; self: number; other: number } {
  let self = 0;
  let other = 0;
  const counts = new Map<number, number>();
  tops.forEach((t, i) => {
    const A = advantages[i];
    if (sampled[i] === t.id) self += A * (1 - t.p);
    else other += -A * t.p;
    counts.set(t.id, (counts.get(t.id) ?? 0) + 1);
  });
  let id: number | null = null;
  for (const [k, n] of counts) if (id === null || n > counts.get(id)!) id = k;
  return { id, self, other };
}
