/**
 * The synchronous per-update SFT loss (docs/design.md A.6: in the official code its weight is
 * 1.0): every GRPO mini-batch adds weight x the token-mean cross-entropy of the teacher trajectories of
 * the mini-batch's tasks. It is the synchronous counterpart of interleaving SFT phases with RL: the same
 * supervision, but mixed into every update instead of given in separate phases.
 */
import * as tf from '@tensorflow/tfjs';
import { Tokenizer } from '../../format/tokenizer';
import { teacherTrajectory } from '../../envs/teacher';
import { Task } from '../../envs/task';
import { GPT } from '../../model/gpt';
import { encodeConversation, TrainingSequence } from '../encode';
import { padBatch, PaddedBatch } from '../batch';
import { trainedCrossEntropy } from '../sft';
import { SyncSignal } from '../grpo/signal';
import { ConfigOf, declareConfig, int, num } from '../../util/fields';

const SYNC_SFT_FIELDS = {
  /** Weight of the SFT loss added to each GRPO update. Paper code: 1.0. */
  weight: num(1.0, { min: 0, max: 100 }),
  /** Longest sequence (tokens; the default model's context is 1024). */
  maxLen: int(1024, 1, 8192, 'tokens'),
};

export const SYNC_SFT = declareConfig('syncsft', SYNC_SFT_FIELDS);
export type SyncSFTConfig = ConfigOf<typeof SYNC_SFT_FIELDS>;
export const defaultSyncSFTConfig: SyncSFTConfig = SYNC_SFT.defaults;

export function syncSftSignal(tok: Tokenizer, cfg: Partial<SyncSFTConfig> = {}): SyncSignal {
  const c: SyncSFTConfig = { ...defaultSyncSFTConfig, ...cfg };
  const cache = new Map<string, TrainingSequence>();
  const seq = (t: Task) => {
    let s = cache.get(t.id);
    if (!s) cache.set(t.id, (s = encodeConversation(tok, teacherTrajectory(t))));
    return s;
  };
  return {
    name: 'sync-sft',
    prepareExtra(tasks: Task[]): PaddedBatch | null {
      return tasks.length ? padBatch(tasks.map(seq), c.maxLen) : null;
    },
    extraLoss(model: GPT, batch: PaddedBatch): tf.Scalar {
      return tf.mul(trainedCrossEntropy(model, batch), c.weight) as tf.Scalar;
    },
  };
}
