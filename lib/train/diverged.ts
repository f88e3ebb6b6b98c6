/**
 * A run that diverges is named as such. Too large a learning rate (`--set grpo.lr=1e30`) makes the weights
 * infinite within a step or two; the first place that sees it is the loss, the gradient norm, or the logits of the
 * next sample. Without a check it fails far from the cause ("every token is forbidden": the sampler found only NaN
 * weights). The three places raise NonFinite with the quantity; the loop that knows the step and the learning rate
 * (the GRPO stage, the SFT loop) turns it into Diverged, which the runner records in the run folder
 * (diverged.json: the folder is unfinished and says why) and the command line prints as one line, exit 1.
 */

/** A quantity that must be finite was not (raised where it is computed). */
export class NonFinite extends Error {
  constructor(readonly quantity: 'loss' | 'gradient norm' | 'logits', readonly value: number) {
    super(`${quantity} is ${value}`);
  }
}

/** Throw NonFinite when `value` is NaN or infinite. */
export function checkFinite(quantity: NonFinite['quantity'], value: number): void {
  if (!Number.isFinite(value)) throw new NonFinite(quantity, value);
}

/** Where and how a run diverged: diverged.json in its folder. */
export interface DivergedInfo {
  /** The training loop that saw it. */
  phase: 'grpo' | 'sft';
  /** Its stage index in the experiment. */
  stage: number;
  /** The step of that loop (1-based) during which the quantity was not finite. */
  step: number;
  quantity: NonFinite['quantity'];
  /** NaN, Infinity or -Infinity, as text (JSON has no such numbers). */
  value: string;
  /** The learning rate of that step. */
  lr: number;
}

export class Diverged extends Error {
  constructor(readonly info: DivergedInfo) {
    super(`diverged: ${info.phase} step ${info.step} (stage ${info.stage}): the ${info.quantity} ` +
      `${info.quantity === 'logits' ? 'are' : 'is'} ${info.value} at learning rate ${Number(info.lr.toPrecision(4))}`);
  }
}

/** `e` as Diverged at this step when it is a NonFinite, else `e` unchanged (for a rethrow). */
export function divergedAt(e: unknown, at: Omit<DivergedInfo, 'quantity' | 'value'>): unknown {
  if (!(e instanceof NonFinite)) return e;
  return new Diverged({ ...at, quantity: e.quantity, value: String(e.value) });
}
