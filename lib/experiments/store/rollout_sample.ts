/**
 * The committed excerpt of a run's rollouts. `rollouts.jsonl` holds every sampled conversation of every RL step
 * (megabytes; regenerated, not committed). Notebooks and readers need real conversations from committed runs,
 * so at the end of a run we keep the records of the first `groups` prompt groups of step 1 and of every
 * `every`-th step of each RL stage in `rollouts-sample.jsonl`, next to metrics.jsonl (a full-preset run: 16
 * steps x 4 groups x 8 rollouts, ~0.3 MB). It is derived from the full log, so resumed runs need no care.
 */
import * as fs from 'fs';
import * as path from 'path';
import { readStepRecords } from '../../train/interleaved';
import { writeFileAtomic } from '../../util/atomic';
import { ROLLOUT_SAMPLE_FILE } from './folder';


/** Write OUT/rollouts-sample.jsonl from OUT/rollouts.jsonl (no-op without it); returns the number of records. */
export function writeRolloutSample(outDir: string, every = 10, groups = 4): number {
  const full = path.join(outDir, 'rollouts.jsonl');
  if (!fs.existsSync(full)) return 0;
  const kept = readStepRecords(full).filter((r) => (r.step === 1 || r.step % every === 0) && r.group < groups);
  const file = path.join(outDir, ROLLOUT_SAMPLE_FILE);
  writeFileAtomic(file, kept.map((r) => JSON.stringify(r)).join('\n') + (kept.length ? '\n' : ''));
  return kept.length;
}
