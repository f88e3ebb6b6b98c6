/**
 * GRPO outcome advantages (docs/design.md A.4): within each group of rollouts of one prompt,
 *   A_i = (r_i - mean(r)) / (std(r) + 1e-6),
 * the same value on every response token of rollout i. `std` is the unbiased (n - 1) standard deviation,
 * as torch.std computes it in verl's compute_grpo_outcome_advantage. A group whose rewards are all equal
 * (all 0 or all 1) gets zero advantage: it teaches nothing, which is why the share of all-zero groups is
 * logged every step.
 */

/** Advantages for rewards laid out group after group (`rewards.length` a multiple of `groupSize`). */
export function grpoAdvantages(rewards: number[], groupSize: number, eps = 1e-6): number[] {
  if (groupSize < 1 || rewards.length % groupSize !== 0) {
    throw new Error(`grpoAdvantages: ${rewards.length} rewards do not split into groups of ${groupSize}`);
  }
  const out = new Array<number>(rewards.length);
  for (let g = 0; g < rewards.length; g += groupSize) {
    const group = rewards.slice(g, g + groupSize);
    const mean = group.reduce((a, b) => a + b, 0) / groupSize;
    // torch.std of a single element is NaN; verl sets mean 0, std 1 for singleton groups
    const std = groupSize > 1
      ? Math.sqrt(group.reduce((a, r) => a + (r - mean) * (r - mean), 0) / (groupSize - 1))
      : 1;
    const m = groupSize > 1 ? mean : 0;
    for (let i = 0; i < groupSize; i++) out[g + i] = (group[i] - m) / (std + eps);
  }
  return out;
}

/** Share of groups whose rewards are all zero (no learning signal and no success). */
export function zeroRewardGroupShare(rewards: number[], groupSize: number): number {
  const groups = rewards.length / groupSize;
  let zero = 0;
  for (let g = 0; g < rewards.length; g += groupSize) {
    if (rewards.slice(g, g + groupSize).every((r) => r === 0)) zero++;
  }
  return groups > 0 ? zero / groups : 0;
}

/** Group statistics of rewards laid out group by group. */
export function groupShares(rewards: number[],
  groupSize: number): { mixed: number; allFail: number; allSuccess: number } {
  let mixed = 0, allFail = 0, allSuccess = 0;
  const groups = Math.floor(rewards.length / groupSize);
  for (let g = 0; g < groups; g++) {
    const r = rewards.slice(g * groupSize, (g + 1) * groupSize);
    if (r.every((x) => x === r[0])) {
      if (r[0] > 0) allSuccess++; else allFail++;
    } else mixed++;
  }
  const d = Math.max(groups, 1);
  return { mixed: mixed / d, allFail: allFail / d, allSuccess: allSuccess / d };
}

/**
 * Share of groups whose rewards are all equal (all failures or all successes). Their group-normalised
 * advantages are all 0, so they carry no policy-gradient signal; 1 means the step learns nothing from reward.
 */
export function zeroVarianceGroupShare(rewards: number[], groupSize: number): number {
  return rewards.length >= groupSize ? 1 - groupShares(rewards, groupSize).mixed : 0;
}
