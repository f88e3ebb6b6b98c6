/**
 * The committed sampled messages of a run, read with the current message rule. A run keeps the rollouts of RL step 1
 * and every 10th step, four groups of eight (`rollouts-sample.jsonl`, lib/experiments/store/rollout_sample.ts); each
 * message
 * is classified here again (lib/format/states.ts messageMode), not read from the state recorded at training time:
 * runs made before repetition loops were full collapse recorded a loop as a healthy response.
 *
 *   late messages   the sampled (never OPS's scripted) messages of the RL steps in the last third of the run's RL
 *                   steps (full preset: RL steps 100-150 of 150); what "after the collapse" means in every table.
 */
import * as fs from 'fs';
import * as path from 'path';
import { MessageMode, StructuralState } from '../../format/types';
import { messageMode, modeShares, stateOfMode, stateShares } from '../../format/states';
import { RolloutRecord, grpoRecords, stepOf } from '../../train/records';
import { readJsonlValues } from '../../util/jsonl';
import { ROLLOUT_SAMPLE_FILE } from '../../experiments/store/folder';
import type { SeedResult } from './results';

/** The committed rollout excerpt of a run folder ([] when the run kept none). */
export function readRolloutSample(runDir: string): RolloutRecord[] {
  const file = path.join(runDir, ROLLOUT_SAMPLE_FILE);
  return fs.existsSync(file) ? readJsonlValues<RolloutRecord>(file, `rollout sample not found: ${file}`) : [];
}

/** The share of a run's RL steps, from the end, whose messages count as late. */
export const LATE_FRACTION = 1 / 3;

/** A sampled message of a committed run, placed on the run's axes. */
export interface SampledMessage {
  /** RL step counted over the whole run (1 = the first RL step of the first stage) and the global step. */
  rlStep: number;
  globalStep: number;
  mode: MessageMode;
  content: string;
}

const cache = new Map<string, SampledMessage[]>();

/**
 * Every sampled message of a run's rollouts-sample.jsonl with its mode ([] without the file). Records carry their
 * stage and the step within it; the run's RL records give each its place on the run-wide axes.
 */
export function sampledMessages(seed: Pick<SeedResult, 'dir' | 'metrics'>): SampledMessage[] {
  const file = path.join(seed.dir, ROLLOUT_SAMPLE_FILE);
  const stat = fs.existsSync(file) ? fs.statSync(file) : null;
  const key = `${path.resolve(file)}:${stat?.mtimeMs ?? 0}:${stat?.size ?? 0}`; // a run written again is read again
  const hit = cache.get(key);
  if (hit) return hit;
  const g = grpoRecords(seed.metrics);
  const place = new Map(g.map((r, i) => [`${r.stage ?? 0}:${r.step}`,
    { rlStep: i + 1, globalStep: stepOf(r) ?? r.step }]));
  const out: SampledMessage[] = [];
  for (const r of readRolloutSample(seed.dir)) {
    if (r.scripted) continue;
    const at = place.get(`${r.stage ?? 0}:${r.step}`) ?? { rlStep: r.step, globalStep: r.step };
    for (const content of r.messages) out.push({ ...at, mode: messageMode(content), content });
  }
  cache.set(key, out);
  return out;
}

/** The first RL step whose messages count as late. */
export function lateFrom(seed: Pick<SeedResult, 'metrics'>): number {
  return Math.max(1, Math.ceil(grpoRecords(seed.metrics).length * (1 - LATE_FRACTION)));
}

/** The late messages of a run and their mode shares (null shares without a rollout sample). */
export function lateModes(seed: Pick<SeedResult,
  'dir' | 'metrics'>): { from: number; n: number; shares: Record<MessageMode, number> | null } {
  const from = lateFrom(seed);
  const late = sampledMessages(seed).filter((m) => m.rlStep >= from);
  return { from, n: late.length, shares: late.length ? modeShares(late.map((m) => m.mode)) : null };
}

/** Structural-state shares of a run's late messages by the current rule (null without a rollout sample). */
export function lateStates(seed: Pick<SeedResult, 'dir' | 'metrics'>): Record<StructuralState, number> | null {
  const from = lateFrom(seed);
  const late = sampledMessages(seed).filter((m) => m.rlStep >= from);
  return late.length ? stateShares(late.map((m) => stateOfMode(m.mode))) : null;
}

/** Modes of one rollout record's messages (the current rule, whatever the record says). */
export function recordModes(r: RolloutRecord): MessageMode[] {
  return r.messages.map((m) => messageMode(m));
}
