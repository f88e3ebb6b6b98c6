/**
 * Model checkpoints: `model.json` (config, meta, tensor table) + `weights.bin` (raw little-endian float32).
 *
 * Writes are atomic per file and ordered: both files go to temp names in the same directory, then
 * weights.bin is renamed into place first and model.json last. A reader that finds model.json therefore finds
 * the weights it describes (a crash in between leaves at worst new weights with the old json, whose tensor
 * table and byteLength check would then catch a mismatch in shape).
 *
 * The vocab fingerprint in meta ties a checkpoint to the tokenizer it was trained with: loading with another
 * vocabulary would silently map ids to the wrong tokens, so it is an error.
 *
 * Loading trusts nothing in the files: the tensor table must be a list of named entries whose offsets are
 * whole, aligned, inside weights.bin and non-overlapping, and every weight must be finite (a NaN weight
 * would otherwise surface much later as a sampler with no token left to pick). Every error names the file.
 *
 * Content hash: model.json records the SHA-256 of weights.bin (`weightsSha256`), checked on every load, so
 * flipped bits that leave every weight finite (silent corruption: the policy just behaves differently) are
 * an error naming the file rather than different results. A checkpoint saved before hashes loads with a
 * one-line warning. `verifyCheckpoint` does the same checks on the files alone, without tfjs, so a command
 * can refuse a bad checkpoint before any backend starts.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs';
import { GPTConfig, validateGPTConfig } from './config';
import { writing } from '../util/errors';
import { GPT } from './gpt';

export interface CheckpointMeta {
  vocabFingerprint: string;
  [k: string]: unknown;
}

interface TensorEntry {
  name: string;
  shape: number[];
  dtype: 'float32';
  /** Byte offset into weights.bin. */
  offset: number;
}

interface ModelJson {
  format: 'toolrl-gpt-v1';
  config: GPTConfig;
  meta: CheckpointMeta;
  tensors: TensorEntry[];
  byteLength: number;
  /** SHA-256 (hex) of weights.bin; absent in checkpoints saved before hashes. */
  weightsSha256?: string;
}

const MODEL_JSON = 'model.json';
const WEIGHTS_BIN = 'weights.bin';

export const sha256 = (buf: Buffer): string => crypto.createHash('sha256').update(buf).digest('hex');

/**
 * Write named float32 tensors as (json, bin) atomically: temp files, then rename bin first, json last.
 * `json` receives the SHA-256 of the bin's bytes. A failed write removes its temp files and names the file.
 */
function writeBundle(dir: string, jsonName: string, binName: string, json: (binSha256: string) => object,
  arrays: Float32Array[]): void {
  writing(dir, () => fs.mkdirSync(dir, { recursive: true }));
  const total = arrays.reduce((a, x) => a + x.byteLength, 0);
  const buf = Buffer.alloc(total);
  let off = 0;
  for (const a of arrays) {
    // Buffer.writeFloatLE per value would be slow; copy the bytes, converting endianness only if needed.
    const bytes = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    if (bigEndianHost()) for (let i = 0; i < a.length; i++) buf.writeFloatLE(a[i], off + 4 * i);
    else bytes.copy(buf, off);
    off += a.byteLength;
  }
  const tag = `.${process.pid}.${Date.now()}.tmp`;
  const tmpBin = path.join(dir, binName + tag);
  const tmpJson = path.join(dir, jsonName + tag);
  try {
    writing(tmpBin, () => fs.writeFileSync(tmpBin, buf));
    writing(tmpJson, () => fs.writeFileSync(tmpJson, JSON.stringify(json(sha256(buf)), null, 1) + '\n'));
    writing(path.join(dir, binName), () => fs.renameSync(tmpBin, path.join(dir, binName)));
    writing(path.join(dir, jsonName), () => fs.renameSync(tmpJson, path.join(dir, jsonName)));
  } finally {
    for (const f of [tmpBin, tmpJson]) if (fs.existsSync(f)) fs.unlinkSync(f);
  }
}

function bigEndianHost(): boolean {
  return new Uint8Array(new Uint16Array([1]).buffer)[0] === 0;
}

function readFileNamed(file: string): Buffer {
  if (!fs.existsSync(file)) throw new Error(`checkpoint: missing file ${file}`);
  return fs.readFileSync(file);
}

/** Float32Array copy of bin[offset, offset + 4*count), little-endian; checks bounds and finiteness. */
function floatsAt(bin: Buffer, offset: number, count: number, file: string, name: string): Float32Array {
  if (!Number.isInteger(offset) || offset < 0 || offset % 4 !== 0) {
    throw new Error(`checkpoint: tensor "${name}" has offset ${offset} into ${file} (expected a whole multiple of ` +
      `4, >= 0)`);
  }
  if (offset + 4 *
    count > bin.byteLength) throw new Error(`checkpoint: ${file} is too short for tensor "${name}" (needs ` +
    `${offset + 4 * count} bytes, has ${bin.byteLength})`);
  const out = new Float32Array(count);
  if (bigEndianHost()) for (let i = 0; i < count; i++) out[i] = bin.readFloatLE(offset + 4 * i);
  else Buffer.from(out.buffer).set(bin.subarray(offset, offset + 4 * count));
  for (let i = 0; i < count; i++) {
    if (!Number.isFinite(out[i])) throw new Error(`checkpoint: tensor "${name}" in ${file} holds a non-finite value ` +
      `(${out[i]}) at index ${i}`);
  }
  return out;
}

/** Byte ranges [offset, offset + bytes) must not overlap (each weight has its own bytes). */
function checkNoOverlap(ranges: { name: string; offset: number; bytes: number }[], file: string): void {
  const sorted = ranges.slice().sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1];
    if (sorted[i].offset < prev.offset + prev.bytes) {
      throw new Error(`checkpoint: tensors "${prev.name}" and "${sorted[i].name}" overlap in ${file}`);
    }
  }
}

/** Parse a JSON file of a checkpoint, naming it when it is missing or broken. */
function readJson<T>(file: string): T {
  const text = readFileNamed(file).toString('utf8');
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(`checkpoint: ${file} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Save `model` under `dir` (created if needed). */
export function saveCheckpoint(dir: string, model: GPT, meta: CheckpointMeta): void {
  if (typeof meta?.vocabFingerprint !== 'string' || meta.vocabFingerprint === '') {
    throw new Error('saveCheckpoint: meta.vocabFingerprint must be a non-empty string');
  }
  const tensors: TensorEntry[] = [];
  const arrays: Float32Array[] = [];
  let offset = 0;
  for (const [name, v] of model.params()) {
    const data = v.dataSync() as Float32Array;
    tensors.push({ name, shape: v.shape.slice(), dtype: 'float32', offset });
    arrays.push(data);
    offset += data.byteLength;
  }
  writeBundle(dir, MODEL_JSON, WEIGHTS_BIN,
    (weightsSha256): ModelJson => ({ format: 'toolrl-gpt-v1', config: model.config, meta, tensors, byteLength: offset,
      weightsSha256 }), arrays);
}

const warnedUnhashed = new Set<string>();

/** weights.bin against the hash model.json records: an error naming both files, or a one-time warning without one. */
function checkHash(json: { weightsSha256?: unknown }, bin: Buffer, jsonFile: string, binFile: string): void {
  if (json.weightsSha256 === undefined) {
    if (!warnedUnhashed.has(path.resolve(jsonFile))) {
      warnedUnhashed.add(path.resolve(jsonFile));
      process.stderr.write(`warning: ${jsonFile} records no weightsSha256 (saved before checkpoints carried a ` +
        `hash): ${binFile} is loaded unchecked\n`);
    }
    return;
  }
  const got = sha256(bin);
  if (got !== json.weightsSha256) {
    throw new Error(`checkpoint: ${binFile} is corrupt: its SHA-256 is ${got}, ${jsonFile} records ` +
      `${JSON.stringify(json.weightsSha256)}`);
  }
}

/** model.json and weights.bin of `dir`, checked against each other (format, vocabulary, config, size, hash). */
function readVerified(dir: string,
  opts: { expectVocabFingerprint?: string }): { json: ModelJson; bin: Buffer; jsonFile: string; binFile: string } {
  if (!fs.existsSync(dir)) throw new Error(`checkpoint: directory not found: ${dir}`);
  const jsonFile = path.join(dir, MODEL_JSON);
  const binFile = path.join(dir, WEIGHTS_BIN);
  const json = readJson<ModelJson>(jsonFile);
  if (!json || typeof json !== 'object') throw new Error(`checkpoint: ${jsonFile} is not a JSON object`);
  if (json.format !== 'toolrl-gpt-v1') throw new Error(`checkpoint: ${jsonFile} has format ` +
    `${JSON.stringify(json.format)}, expected "toolrl-gpt-v1"`);
  const want = opts.expectVocabFingerprint;
  if (want !== undefined && json.meta?.vocabFingerprint !== want) {
    throw new Error(`checkpoint: vocabulary mismatch in ${dir}: checkpoint was trained with vocab fingerprint ` +
      `"${json.meta?.vocabFingerprint}", the current tokenizer has "${want}"`);
  }
  try {
    validateGPTConfig(json.config);
  } catch (e) {
    throw new Error(`checkpoint: ${jsonFile}: ${(e as Error).message}`);
  }
  if (!Array.isArray(json.tensors)) throw new Error(`checkpoint: ${jsonFile} has no "tensors" list`);
  for (const t of json.tensors) {
    if (!t || typeof t.name !== 'string' || !Array.isArray(t.shape) || typeof t.offset !== 'number') {
      throw new Error(`checkpoint: ${jsonFile} has a malformed tensor entry ${JSON.stringify(t)} (needs name, ` +
        `shape, offset)`);
    }
  }
  if (!Number.isInteger(json.byteLength) || json.byteLength < 0) {
    throw new Error(`checkpoint: ${jsonFile} has byteLength ${JSON.stringify(json.byteLength)}, expected an integer ` +
      `>= 0`);
  }
  const bin = readFileNamed(binFile);
  if (bin.byteLength !== json.byteLength) {
    throw new Error(`checkpoint: ${binFile} has ${bin.byteLength} bytes, ${jsonFile} says ${json.byteLength}`);
  }
  checkHash(json, bin, jsonFile, binFile);
  return { json, bin, jsonFile, binFile };
}

/**
 * The checks of loadCheckpoint that need no tfjs (files, format, vocabulary, config, size, content hash);
 * throws naming the file. Returns the model config and meta.
 */
export function verifyCheckpoint(dir: string, opts: { expectVocabFingerprint?: string } =
  {}): { config: GPTConfig; meta: CheckpointMeta } {
  const { json } = readVerified(dir, opts);
  return { config: json.config, meta: json.meta };
}

/** Load a checkpoint written by saveCheckpoint; weights are bit-for-bit those saved. */
export function loadCheckpoint(dir: string, opts: { expectVocabFingerprint?: string } =
  {}): { model: GPT; meta: CheckpointMeta } {
  const { json, bin, jsonFile, binFile } = readVerified(dir, opts);
  const model = new GPT(json.config, 0);
  try {
    const params = model.params();
    const seen = new Set<string>();
    for (const t of json.tensors) {
      const v = params.get(t.name);
      if (v === undefined) throw new Error(`checkpoint: ${jsonFile} has unknown tensor "${t.name}"`);
      if (seen.has(t.name)) throw new Error(`checkpoint: ${jsonFile} lists tensor "${t.name}" twice`);
      if (t.shape.join(',') !== v.shape.join(',')) {
        throw new Error(`checkpoint: tensor "${t.name}" has shape [${t.shape}] in ${jsonFile}, model expects ` +
          `[${v.shape}]`);
      }
      const data = floatsAt(bin, t.offset, v.size, binFile, t.name);
      tf.tidy(() => v.assign(tf.tensor(data, v.shape, 'float32')));
      seen.add(t.name);
    }
    for (const name of params.keys()) if (!seen.has(name)) throw new Error(`checkpoint: ${jsonFile} lacks tensor ` +
      `"${name}"`);
    checkNoOverlap(json.tensors.map((t) => ({ name: t.name, offset: t.offset,
      bytes: 4 * (params.get(t.name)?.size ?? 0) })), binFile);
  } catch (e) {
    model.dispose();
    throw e;
  }
  return { model, meta: json.meta };
}

/** Optimizer state (see AdamW.getState), saved as optim.json + optim.bin with the same atomic scheme. */
export function saveOptimizerState(dir: string, state: { stepCount: number; m: Record<string,
  Float32Array>; v: Record<string, Float32Array> }): void {
  const names = Object.keys(state.m);
  const arrays: Float32Array[] = [];
  const entries: { name: string; size: number; offset: number }[] = [];
  let offset = 0;
  for (const which of ['m', 'v'] as const) {
    for (const n of names) {
      const a = state[which][n];
      if (a === undefined) throw new Error(`saveOptimizerState: state.${which} lacks "${n}"`);
      entries.push({ name: `${which}/${n}`, size: a.length, offset });
      arrays.push(a);
      offset += a.byteLength;
    }
  }
  writeBundle(dir, 'optim.json', 'optim.bin', (binSha256) =>
    ({ stepCount: state.stepCount, entries, byteLength: offset, binSha256 }), arrays);
}

/** Read back what saveOptimizerState wrote. */
export function loadOptimizerState(dir: string): { stepCount: number; m: Record<string,
  Float32Array>; v: Record<string, Float32Array> } {
  const jsonFile = path.join(dir, 'optim.json');
  const binFile = path.join(dir, 'optim.bin');
  type Entry = { name: string; size: number; offset: number };
  const json = readJson<{ stepCount: number; entries: Entry[]; byteLength: number; binSha256?: string }>(jsonFile);
  if (!json || !Number.isInteger(json.stepCount) || !Array.isArray(json.entries)) {
    throw new Error(`checkpoint: ${jsonFile} needs an integer "stepCount" and an "entries" list`);
  }
  const bin = readFileNamed(binFile);
  if (Number.isInteger(json.byteLength) && bin.byteLength !== json.byteLength) {
    throw new Error(`checkpoint: ${binFile} has ${bin.byteLength} bytes, ${jsonFile} says ${json.byteLength}`);
  }
  if (json.binSha256 !== undefined && sha256(bin) !== json.binSha256) {
    throw new Error(`checkpoint: ${binFile} is corrupt: its SHA-256 differs from the one ${jsonFile} records`);
  }
  const out = { stepCount: json.stepCount, m: {} as Record<string, Float32Array>, v: {} as Record<string,
    Float32Array> };
  for (const e of json.entries) {
    const slash = typeof e?.name === 'string' ? e.name.indexOf('/') : -1;
    const which = slash > 0 ? e.name.slice(0, slash) : '';
    if ((which !== 'm' && which !== 'v') || !Number.isInteger(e.size) || e.size < 0) {
      throw new Error(`checkpoint: ${jsonFile} has a malformed entry ${JSON.stringify(e)} (needs name "m/..." or ` +
        `"v/...", size, offset)`);
    }
    out[which][e.name.slice(slash + 1)] = floatsAt(bin, e.offset, e.size, binFile, e.name);
  }
  checkNoOverlap(json.entries.map((e) => ({ name: e.name, offset: e.offset, bytes: 4 * e.size })), binFile);
  return out;
}
