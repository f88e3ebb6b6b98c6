/**
 * Exact resume of a killed RL run. Every `checkpointEvery` steps the runner saves, into `out/resume/`:
 * the policy weights, the AdamW moments and step count, the trainer's step and PRNG state, and how far the
 * logs had got. `--resume` restores all of it and cuts the logs back, so the continued run writes the same
 * metrics as an uninterrupted one (same seed, same backend). The folder is replaced atomically (written
 * as `resume.tmp/`, then renamed), so a kill during a save leaves the previous state intact.
 */
import * as fs from 'fs';
import * as path from 'path';
import { GPT } from '../model/gpt';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint';
import { Tokenizer } from '../format/tokenizer';
import { AdamWState } from '../train/optim';
import { GRPOTrainer, TrainerState } from '../train/grpo/trainer';
import { MetricsLog, readMetrics } from '../train/metrics';

interface ResumeMeta {
  stage: number;
  globalStepBase: number;
  trainer: TrainerState;
  metricsLines: number;
  rolloutBytes: number;
  optimizer: { stepCount: number; tensors: { name: string; which: 'm' | 'v'; length: number }[] };
}

export interface ResumeSave {
  stage: number;
  globalStepBase: number;
  model: GPT;
  trainer: GRPOTrainer;
  metricsLines: number;
  vocabFingerprint: string;
}

export function saveResumeState(out: string, s: ResumeSave): void {
  const dir = path.join(out, 'resume');
  const tmp = path.join(out, 'resume.tmp');
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  saveCheckpoint(path.join(tmp, 'model'), s.model, { vocabFingerprint: s.vocabFingerprint });
  const st: AdamWState = s.trainer.opt.getState();
  const tensors: ResumeMeta['optimizer']['tensors'] = [];
  const chunks: Buffer[] = [];
  for (const which of ['m', 'v'] as const) {
    for (const [name, arr] of Object.entries(st[which])) {
      tensors.push({ name, which, length: arr.length });
      chunks.push(Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength));
    }
  }
  fs.writeFileSync(path.join(tmp, 'optimizer.bin'), Buffer.concat(chunks));
  const rolloutsFile = path.join(out, 'rollouts.jsonl');
  const meta: ResumeMeta = {
    stage: s.stage, globalStepBase: s.globalStepBase, trainer: s.trainer.getState(), metricsLines: s.metricsLines,
    rolloutBytes: fs.existsSync(rolloutsFile) ? fs.statSync(rolloutsFile).size : 0,
    optimizer: { stepCount: st.stepCount, tensors },
  };
  fs.writeFileSync(path.join(tmp, 'state.json'), JSON.stringify(meta, null, 2) + '\n');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
}

export interface ResumeState {
  stage: number;
  globalStepBase: number;
  model: GPT;
  restoreTrainer(trainer: GRPOTrainer): void;
  trimLogs(metrics: MetricsLog): void;
}

export function loadResumeState(out: string, tok: Tokenizer): ResumeState {
  const dir = path.join(out, 'resume');
  const stateFile = path.join(dir, 'state.json');
  if (!fs.existsSync(stateFile)) {
    throw new Error(`--resume: no resume state in ${dir} (a run saves one every checkpointEvery RL steps)`);
  }
  const meta = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as ResumeMeta;
  const model = loadCheckpoint(path.join(dir, 'model'), { expectVocabFingerprint: tok.fingerprint }).model;
  const buf = fs.readFileSync(path.join(dir, 'optimizer.bin'));
  const opt: AdamWState = { stepCount: meta.optimizer.stepCount, m: {}, v: {} };
  let offset = 0;
  for (const t of meta.optimizer.tensors) {
    const bytes = buf.subarray(offset, offset + t.length * 4);
    opt[t.which][t.name] = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    offset += t.length * 4;
  }
  return {
    stage: meta.stage,
    globalStepBase: meta.globalStepBase,
    model,
    restoreTrainer(trainer) {
      trainer.setState(meta.trainer);
      trainer.opt.setState(opt);
    },
    trimLogs(metrics) {
      const file = metrics.file as string;
      const kept = fs.existsSync(file) ? readMetrics(file).slice(0, meta.metricsLines) : [];
      fs.writeFileSync(file, kept.map((r) => JSON.stringify(r) + '\n').join(''));
      metrics.records.push(...kept);
      const rolloutsFile = path.join(out, 'rollouts.jsonl');
      if (fs.existsSync(rolloutsFile)) fs.truncateSync(rolloutsFile, meta.rolloutBytes);
    },
  };
}
