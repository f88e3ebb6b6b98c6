/**
 * The paper's pipeline as switchable differences from the lab's exact one (docs/design.md E, the pipeline audit).
 *
 * The lab samples and trains with one engine in one precision, trains exactly the tokens it sampled, masks the
 * `<|im_end|>` it had to append to a message cut at the length cap, and treats any tool-call tag as a call attempt.
 * The paper's code (Tool-RL-Box on verl-tool and veRL 0.4.1, "TRB" below) does none of these. Each field turns one
 * of its behaviours on, mirroring its code as closely as the lab allows and at the size its setup implies; all are
 * off by default, so a run without them is the exact pipeline, bit for bit. `--set pipeline.<field>=true` turns one
 * on for a run (recorded in run.json); the `pipeline` preset's configs turn them on one by one (configs.ts).
 */
import { ConfigOf, declareConfig, flag } from '../util/fields';

const PIPELINE_FIELDS = {
  /**
   * E1. A message is a call only when it holds a closed block `<tool_call> ... </tool_call>`; anything else, a bare
   * `<tool_call>` included, is a reply that ends the user turn. TRB: verl_tool/servers/tools/fcl_interface.py:39-61
   * (the tool server) and verl_tool/workers/reward_manager/fcl_eval.py:136-158 (the reward's parser); BFCL's own
   * multi-turn evaluation also ends a turn on a response without decodable calls. The lab: any tag is a call attempt,
   * a bare tag gets an error observation and the turn stays open (lib/envs/episode.ts). Applies to the run's
   * training rollouts, its validation and its final evaluation (the environment the run lives in).
   */
  closedCallsOnly: flag(false),
  /**
   * E2. Train on the re-tokenised text, not the sampled ids: each sampled message is decoded with the special tokens
   * skipped (`<|im_start|>`, `<|im_end|>`, `<pad>`, `<unk>`: Qwen2.5's special tokens; the tool tags are not special
   * there), `<|im_end|>` is appended, and the text is encoded again, falling back to smaller known pieces as BPE
   * does; the next turn reads the re-encoded tokens. TRB: chat_scheduler.py:168 (vLLM returns text),
   * verl_tool/llm_agent/manager.py:198-248 (batch_decode skip_special_tokens=True, append "<|im_end|>", re-encode),
   * manager.py:446-450 (the next prompt concatenates the re-encoded ids). Old log-probs of a changed message come
   * from the trainer (TRB recomputes them for every rollout).
   */
  retokenize: flag(false),
  /**
   * E3. The `<|im_end|>` appended to a message cut at the length cap is trained like a sampled one (loss mask 1, the
   * rollout's advantage), its old log-prob recomputed by the trainer. TRB: manager.py:240-242 appends it, and the loss
   * mask is 0 only on padding (manager.py:540, 1157-1161); mask_overlong_loss is off (agent.yaml:74). The lab masks
   * it (lib/train/rollout_row.ts). The lab's cap is 64 tokens per message (TRB: 2048).
   */
  trainCutEnd: flag(false),
  /**
   * E4. Sample from logits rounded to bfloat16 (8 significant bits, round to nearest even) and train as if the
   * samples came from the trainer's float32 policy: old log-probs recomputed by the trainer, no correction. TRB:
   * vLLM in bf16 (rollout.yaml:26), old log-probs recomputed by the actor (ray_trainer.py:569-579), no rollout
   * correction in its veRL; verl's rollout-correction docs call this mismatch a common mistake. Rounding only the
   * final logits is the smallest such mismatch (TRB's whole forward runs in bf16 on another engine).
   */
  bf16Sampler: flag(false),
  /**
   * E5. Each micro-batch's loss is its own token-mean, weighted by its share of the mini-batch's rows, instead of
   * the mini-batch's exact token-mean: veRL's dynamic batch size (dp_actor.py:909-911, use_dynamic_bsz=True in
   * train_1.5b.sh). Rows with few trained tokens (short, collapsed messages) weigh more than under the token-mean.
   */
  microBatchWeights: flag(false),
};

export const PIPELINE = declareConfig('pipeline', PIPELINE_FIELDS);
export type PipelineConfig = ConfigOf<typeof PIPELINE_FIELDS>;
export const defaultPipelineConfig: PipelineConfig = PIPELINE.defaults;

export const PIPELINE_OPTIONS = Object.keys(defaultPipelineConfig) as (keyof PipelineConfig)[];

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** `x` rounded to the nearest bfloat16 (ties to even), returned as a float32 value. NaN and infinities pass. */
export function toBf16(x: number): number {
  f32[0] = x;
  const u = u32[0];
  if ((u & 0x7f800000) === 0x7f800000) return f32[0]; // NaN or infinity: keep (a NaN's payload may not round)
  u32[0] = (u + 0x7fff + ((u >>> 16) & 1)) & 0xffff0000;
  return f32[0];
}

/** Round `n` logits from `offset` into a fresh array (the sampler's bf16 view; the source stays as it is). */
export function roundLogits(logits: Float32Array, offset: number, n: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = toBf16(logits[offset + i]);
  return out;
}
