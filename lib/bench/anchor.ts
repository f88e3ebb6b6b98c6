/**
 * The reference column of `toolrl bench`: the same model and shapes in PyTorch on the CPU (scripts/bench-torch.py),
 * run by a Python interpreter that has torch (`--anchor PYTHON`). Optional: nothing else needs PyTorch.
 */
import { spawnSync } from 'child_process';
import * as path from 'path';

export interface AnchorResult {
  /** "pytorch <version> cpu, <n> threads" */
  backend: string;
  train_tokens_per_s: number;
  sample_tokens_per_s: number;
  train_ms_per_step: number;
}

/** The script, from the repository root (the working directory of every toolrl command). */
export const ANCHOR_SCRIPT = path.join('scripts', 'bench-torch.py');

/**
 * Run the PyTorch benchmark of a model `shape` ("DxLxH") with vocabulary `vocab` on two threads; `runs` timed
 * repetitions. Throws with the interpreter's own message when it cannot run (no torch, no such interpreter).
 */
export function runAnchor(python: string, shape: string, vocab: number, runs: number): AnchorResult {
  const args = [ANCHOR_SCRIPT, '--model', shape, '--vocab', String(vocab), '--runs', String(runs), '--threads', '2'];
  const r = spawnSync(python, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.error) throw new Error(`--anchor ${python}: ${r.error.message}`);
  if (r.status !== 0) {
    const why = (r.stderr || '').trim().split('\n').slice(-1)[0] || `exit ${r.status}`;
    throw new Error(`--anchor ${python}: ${ANCHOR_SCRIPT} failed (${why}); the interpreter needs torch (pip install ` +
      `torch)`);
  }
  const out = JSON.parse(r.stdout) as AnchorResult;
  return { backend: out.backend, train_tokens_per_s: out.train_tokens_per_s,
    sample_tokens_per_s: out.sample_tokens_per_s, train_ms_per_step: out.train_ms_per_step };
}
