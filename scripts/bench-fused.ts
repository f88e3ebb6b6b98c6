/**
 * Would tf.fused.matMul (product and bias in one kernel) speed up the model's linear layers? For the layer shapes
 * of the default model at several row counts N (16-256: decode passes; 1024-4096: scoring and training), the
 * median milliseconds of lib/model/layers.ts `linear` (matMul, then add) and of the fused op, forward alone and
 * forward + backward, and whether both give the same bits. Figures: docs/backends.md.
 *
 *   node --import tsx scripts/bench-fused.ts [--backend tensorflow|wasm|cpu]
 */
import * as tf from '@tensorflow/tfjs';
import { initBackend, BackendName } from '../lib/backend';
import { linear } from '../lib/model/layers';

/** Median over 3 rounds of the mean ms of `n` calls (after 5 untimed ones); each result is read back. */
function time(f: () => tf.Tensor, n: number): number {
  const rounds: number[] = [];
  for (let r = 0; r < 3; r++) {
    for (let i = 0; i < 5; i++) f().dispose();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const y = f();
      y.dataSync();
      y.dispose();
    }
    rounds.push((performance.now() - t0) / n);
  }
  return rounds.sort((a, b) => a - b)[1];
}

const sameBits = (a: tf.Tensor, b: tf.Tensor) => {
  const x = a.dataSync(), y = b.dataSync();
  return x.every((v, i) => v === y[i]);
};

async function main(): Promise<void> {
  const i = process.argv.indexOf('--backend');
  const backend = await initBackend({ backend: i > 0 ? (process.argv[i + 1] as BackendName) : undefined, verbose: false });
  console.log(`${backend}: ms per call, matMul + add -> fused (same bits?)`);
  for (const [I, O] of [[64, 192], [64, 256], [256, 64], [64, 64]]) {
    for (const N of [16, 256, 1024, 4096]) {
      const x = tf.randomNormal([N, I], 0, 1, 'float32', 3) as tf.Tensor2D;
      const w = tf.randomNormal([I, O], 0, 0.1, 'float32', 4) as tf.Tensor2D;
      const b = tf.randomNormal([O], 0, 0.1, 'float32', 5);
      const plain = (xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor): tf.Tensor => linear(xx as tf.Tensor2D, ww, bb);
      const fused = (xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) => tf.fused.matMul({ a: xx as tf.Tensor2D, b: ww as tf.Tensor2D, bias: bb });
      // forward + backward: the gradients of sum(y) w.r.t. x, w, b; the x gradient is returned (and read)
      const backward = (f: typeof plain) => () => {
        const g = tf.grads((xx: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) => tf.sum(f(xx, ww, bb)))([x, w, b]);
        tf.dispose(g.slice(1));
        return g[0];
      };
      const [y1, y2] = [plain(x, w, b), fused(x, w, b)];
      const same = sameBits(y1, y2);
      tf.dispose([y1, y2]);
      const n = N >= 1024 ? 40 : 200;
      const fwd = [time(() => plain(x, w, b), n), time(() => fused(x, w, b), n)];
      const both = [time(backward(plain), n / 2), time(backward(fused), n / 2)];
      console.log(`[${N}, ${I}] x [${I}, ${O}]: forward ${fwd[0].toFixed(3)} -> ${fwd[1].toFixed(3)}, ` +
        `forward + backward ${both[0].toFixed(3)} -> ${both[1].toFixed(3)} (${same ? 'same bits' : 'bits differ'})`);
      tf.dispose([x, w, b]);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
