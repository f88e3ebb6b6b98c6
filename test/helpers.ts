/** Shared set-up for tests that need the tokenizer, tasks and a tiny model (not itself a test file). */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadTokenizer, Tokenizer } from '../lib/format/tokenizer';
import { loadTasks } from '../lib/envs/data';
import { Task } from '../lib/envs/task';
import { GPT } from '../lib/model/gpt';
import { defaultGPTConfig } from '../lib/model/config';

let tok: Tokenizer | null = null;
export function tokenizer(): Tokenizer {
  if (!tok) tok = loadTokenizer('data/vocab.json');
  return tok;
}

const taskCache: Record<string, Task[]> = {};
export function tasks(split: 'train' | 'test' | 'format_ood' | 'content_ood'): Task[] {
  if (!taskCache[split]) taskCache[split] = loadTasks(split, 'data');
  return taskCache[split];
}

/** A tiny model (fast on any backend) over the project vocabulary. */
export function tinyModel(seed = 1, over: Record<string, number> = {}): GPT {
  return new GPT(defaultGPTConfig(tokenizer().size, { nLayer: 1, nHead: 1, nEmbd: 16, blockSize: 1024, ...over }), seed);
}

export function tmpDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `toolrl-${prefix}-`));
}

export { freePort } from '../scripts/free-port';
