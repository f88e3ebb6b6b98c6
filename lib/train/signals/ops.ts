/**
 * Off-policy supervision (OPS, synchronous; docs/design.md A.6). In every group, rollout 0 is replaced message by
 * message by the ground-truth assistant messages, executed in the environment like any action (so its
 * observations are real), and trained with the same GRPO loss as the sampled rollouts. Because the
 * ground truth always passes the checker, every group holds at least one success: the group never
 * collapses to all-zero rewards, and the correct format keeps receiving a positive advantage.
 *
 * The paper's code also holds a LUFFY-style variant (off by default there): the off-policy tokens are
 * weighted by the policy-shaping function p / (p + gamma), gamma = 0.1, instead of the importance ratio,
 * which gives low-probability ground-truth tokens a larger push. `luffyGamma` turns it on.
 */
import * as tf from '@tensorflow/tfjs';
import { teacherAssistantMessages } from '../../envs/teacher';
import { Task } from '../../envs/task';
import { SyncSignal } from '../grpo/signal';
import { ConfigOf, declareConfig, int, numOrNull } from '../../util/fields';

const OPS_FIELDS = {
  /** Rollouts per group replaced by the ground truth (at most the group size). Paper: 1 (rollout 0). */
  offPolicyRollouts: int(1, 0, 64, 'rollouts'),
  /** Policy-shaping gamma for the LUFFY variant; null = plain GRPO loss on off-policy tokens (paper default). */
  luffyGamma: numOrNull(null, { min: 0, max: 10, open: 'min' }),
};

export const OPS = declareConfig('ops', OPS_FIELDS);
export type OPSConfig = ConfigOf<typeof OPS_FIELDS>;
export const defaultOPSConfig: OPSConfig = OPS.defaults;

export function opsSignal(cfg: Partial<OPSConfig> = {}): SyncSignal {
  const c: OPSConfig = { ...defaultOPSConfig, ...cfg };
  const signal: SyncSignal = {
    name: c.luffyGamma === null ? 'ops' : 'ops-luffy',
    plan(task: Task, index: number) {
      return index < c.offPolicyRollouts ? { script: { messages: teacherAssistantMessages(task) } } : {};
    },
  };
  if (c.luffyGamma !== null) {
    const gamma = c.luffyGamma;
    // per-token loss on off-policy tokens: -A * p / (p + gamma), p = exp(logp) of the current policy
    signal.offPolicyLoss = (logp: tf.Tensor1D, adv: tf.Tensor1D) => {
      const p = tf.exp(logp);
      return tf.neg(tf.mul(adv, tf.div(p, tf.add(p, gamma)))) as tf.Tensor1D;
    };
  }
  return signal;
}
