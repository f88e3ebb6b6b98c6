/**
 * Exact resume of a killed RL run. Every `checkpointEvery` steps the runner saves, into `out/resume/`:
 * the policy weights, the AdamW moments and step count, the trainer's step and PRNG state, how far the
 * logs had got, and the identity of the run (run.json's fields: config, overrides, seed, backend, data
 * fingerprint). `--resume` refuses a state that belongs to another run, restores the rest and cuts the logs
 * back by rewriting them, so the continued run writes the same metrics as an uninterrupted one (same seed,
 * same backend). The folder is replaced atomically (written as `resume.tmp/`, then renamed), so a kill
 * during a save leaves the previous state intact; a save that fails (disk full) removes `resume.tmp/` and names
 * the file it could not write. state.json records the SHA-256 of optimizer.bin, and the policy's model.json that
 * of its weights (lib/model/checkpoint.ts): a state whose bytes changed after the save is refused when it loads.
 */
import * as fs from 'fs';
import * as path from 'path';
import { GPT } from '../../model/gpt';
import { loadCheckpoint, saveCheckpoint, sha256 } from '../../model/checkpoint';
import { Tokenizer } from '../../format/tokenizer';
import { AdamWState } from '../../train/optim';
import { GRPOTrainer, TrainerState } from '../../train/grpo/trainer';
import { MetricRecord } from '../../train/records';
import { MetricsLog } from '../../train/metrics';
import { readJsonFile, writeJsonAtomic } from '../../util/atomic';
import { EXIT, InputError, Refusal, writing } from '../../util/errors';
import { keepFirstBytes, keepFirstRecords } from '../../util/jsonl';
import { RunIdentity, describeIdentity, identityDiff, resumeDir } from './folder';

interface ResumeMeta {
  /** Absent in states written before identities were recorded (then run.json alone is checked). */
  identity?: RunIdentity;
  stage: number;
  globalStepBase: number;
  trainer: TrainerState;
  metricsLines: number;
  rolloutBytes: number;
  /** `sha256` of optimizer.bin: absent in states saved before hashes. */
  optimizer: { stepCount: number; tensors: { name: string; which: 'm' | 'v'; length: number }[]; sha256?: string };
  /** Wall seconds the run had spent when the state was saved, over all its processes; absent in older states. */
  seconds?: number;
}

export interface ResumeSave {
  identity: RunIdentity;
  stage: number;
  globalStepBase: number;
  model: GPT;
  trainer: GRPOTrainer;
  metricsLines: number;
  vocabFingerprint: string;
  /** Wall seconds the run has spent so far (RunContext.startedAt). */
  seconds: number;
}

/** Delete a resume folder, its state.json first: a folder with a state.json is always complete. */
function removeState(dir: string): void {
  fs.rmSync(path.join(dir, 'state.json'), { force: true });
  fs.rmSync(dir, { recursive: true, force: true });
}

export function saveResumeState(out: string, s: ResumeSave): void {
  const tmp = path.join(out, 'resume.tmp');
  try {
    writeState(tmp, out, s);
  } catch (e) {
    removeState(tmp); // a partial state folder is no state at all: leave none behind
    throw e;
  }
  const dir = path.join(out, 'resume');
  const old = path.join(out, 'resume.old');
  if (fs.existsSync(dir)) {
    removeState(old);
    writing(old, () => fs.renameSync(dir, old));
  }
  writing(dir, () => fs.renameSync(tmp, dir));
  removeState(old);
}

/** The state of `s` in the folder `tmp` (created afresh), its state.json last. */
function writeState(tmp: string, out: string, s: ResumeSave): void {
  removeState(tmp);
  writing(tmp, () => fs.mkdirSync(tmp, { recursive: true }));
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
  const optimizerBin = Buffer.concat(chunks);
  const binFile = path.join(tmp, 'optimizer.bin');
  writing(binFile, () => fs.writeFileSync(binFile, optimizerBin));
  const rolloutsFile = path.join(out, 'rollouts.jsonl');
  const meta: ResumeMeta = {
    identity: s.identity, stage: s.stage, globalStepBase: s.globalStepBase, trainer: s.trainer.getState(),
    metricsLines: s.metricsLines, rolloutBytes: fs.existsSync(rolloutsFile) ? fs.statSync(rolloutsFile).size : 0,
    optimizer: { stepCount: st.stepCount, tensors, sha256: sha256(optimizerBin) }, seconds: s.seconds,
  };
  writeJsonAtomic(path.join(tmp, 'state.json'), meta); // last: from here on resume.tmp/ is complete
}

export interface ResumeState {
  stage: number;
  globalStepBase: number;
  /** RL steps of the resumed stage already done. */
  step: number;
  /** Wall seconds the run had spent at the saved point (0 for states saved before this was recorded). */
  seconds: number;
  model: GPT;
  restoreTrainer(trainer: GRPOTrainer): void;
  /** Cut metrics.jsonl and rollouts.jsonl back to the saved point (by rewriting) and load the kept metrics. */
  trimLogs(metrics: MetricsLog): void;
}

/** Reject a state.json that is not an object of the expected shape, naming the file and the field. */
function checkMeta(m: ResumeMeta, file: string): void {
  const bad = (what: string) => new Error(`${file}: ${what}`);
  if (!m || typeof m !== 'object') throw bad('expected a JSON object');
  if (m.identity !== undefined &&
    (m.identity === null || typeof m.identity !== 'object')) throw bad('"identity" must be an object');
  for (const k of ['stage', 'globalStepBase', 'metricsLines', 'rolloutBytes'] as const) {
    if (!Number.isInteger(m[k]) || m[k] < 0) throw bad(`"${k}" must be an integer >= 0, got ${JSON.stringify(m[k])}`);
  }
  if (!m.trainer || !Number.isInteger(m.trainer.step) || typeof m.trainer.rngState !== 'number') {
    throw bad('"trainer" must hold step and rngState');
  }
  const o = m.optimizer;
  if (!o || !Number.isInteger(o.stepCount) ||
    !Array.isArray(o.tensors)) throw bad('"optimizer" must hold stepCount and tensors');
  for (const t of o.tensors) {
    if (!t || typeof t.name !== 'string' || (t.which !== 'm' && t.which !== 'v') || !Number.isInteger(t.length) ||
      t.length < 0) {
      throw bad(`optimizer tensor entry ${JSON.stringify(t)} is malformed`);
    }
  }
}

/** What a saved state folder holds: its metadata, the optimizer moments and the policy. */
interface SavedState {
  meta: ResumeMeta;
  opt: AdamWState;
  model: GPT;
  stateFile: string;
}

/**
 * Read and check a state folder (out/resume/ or a branch point). A damaged one is a bad input file: an
 * InputError (exit 2) naming the file; an I/O error (EIO, EACCES) stays a failure while working (exit 1).
 */
export function readStateFolder(dir: string, tok: Tokenizer): SavedState {
  try {
    return readStateFiles(dir, tok);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const damaged = err instanceof Error && !(err instanceof Refusal) && typeof err.code !== 'string';
    throw damaged ? new InputError(err.message) : e;
  }
}

function readStateFiles(dir: string, tok: Tokenizer): SavedState {
  const stateFile = path.join(dir, 'state.json');
  const meta = readJsonFile<ResumeMeta>(stateFile, 'resume state');
  checkMeta(meta, stateFile);
  const binFile = path.join(dir, 'optimizer.bin');
  if (!fs.existsSync(binFile)) throw new Error(`resume state: missing file ${binFile}`);
  const buf = fs.readFileSync(binFile);
  const need = meta.optimizer.tensors.reduce((a, t) => a + t.length * 4, 0);
  if (buf.byteLength !== need) throw new Error(`${binFile} has ${buf.byteLength} bytes, ${stateFile} says ${need}`);
  if (meta.optimizer.sha256 !== undefined && sha256(buf) !== meta.optimizer.sha256) {
    throw new Error(`${binFile} is corrupt: its SHA-256 differs from the one ${stateFile} records`);
  }
  const opt: AdamWState = { stepCount: meta.optimizer.stepCount, m: {}, v: {} };
  let offset = 0;
  for (const t of meta.optimizer.tensors) {
    const a = new Float32Array(buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + offset + t.length * 4));
    for (let i = 0; i < a.length; i++) {
      if (!Number.isFinite(a[i])) {
        throw new Error(`${binFile}: optimizer moment ${t.which}/${t.name} holds a non-finite value at index ${i}`);
      }
    }
    opt[t.which][t.name] = a;
    offset += t.length * 4;
  }
  const model = loadCheckpoint(path.join(dir, 'model'), { expectVocabFingerprint: tok.fingerprint }).model;
  return { meta, opt, model, stateFile };
}

/** A ResumeState over a read state folder; `trimLogs` decides where the kept logs come from. */
export function asResumeState(s: SavedState, trimLogs: (metrics: MetricsLog,
  kept: { metricsLines: number; rolloutBytes: number }) => void): ResumeState {
  return {
    stage: s.meta.stage,
    globalStepBase: s.meta.globalStepBase,
    step: s.meta.trainer.step,
    seconds: typeof s.meta.seconds === 'number' && s.meta.seconds >= 0 ? s.meta.seconds : 0,
    model: s.model,
    restoreTrainer(trainer) {
      trainer.setState(s.meta.trainer);
      trainer.opt.setState(s.opt);
    },
    trimLogs: (metrics) => trimLogs(metrics, { metricsLines: s.meta.metricsLines, rolloutBytes: s.meta.rolloutBytes }),
  };
}

/**
 * Load `out/resume/` for the run `identity`; throws, naming the file, when it is missing, damaged, or
 * belongs to another run (naming both).
 */
export function loadResumeState(out: string, tok: Tokenizer, identity: RunIdentity): ResumeState {
  const dir = resumeDir(out);
  if (dir === null) {
    throw new Refusal(`--resume: no resume state in ${path.join(out, 'resume')} ` +
      '(a run saves one every checkpointEvery RL steps)', EXIT.cannotResume);
  }
  const saved = readStateFolder(dir, tok);
  const { meta, stateFile } = saved;
  if (!meta.identity) {
    // written before resume states recorded their run: the caller has checked run.json, which must exist
    if (!fs.existsSync(path.join(out, 'run.json'))) {
      saved.model.dispose();
      throw new Refusal(`${stateFile} records no run identity and ${out} has no run.json: ` +
        'cannot tell whose state it is', EXIT.cannotResume);
    }
    process.stderr.write(`note: ${stateFile} predates run identities; checked against run.json only\n`);
  }
  const diff = meta.identity ? identityDiff(meta.identity, identity) : [];
  if (diff.length) {
    saved.model.dispose();
    const theirs = describeIdentity(meta.identity as RunIdentity);
    throw new Refusal(`--resume: ${stateFile} belongs to another run (${theirs}), ` +
      `not to this one (${describeIdentity(identity)}): ${diff.join('; ')}`, EXIT.cannotResume);
  }
  return asResumeState(saved, (metrics, kept) => {
    const file = metrics.file as string;
    metrics.records.push(...keepFirstRecords<MetricRecord>(file, kept.metricsLines));
    keepFirstBytes(path.join(out, 'rollouts.jsonl'), kept.rolloutBytes);
  });
}
