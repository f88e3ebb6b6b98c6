/**
 * The one reader of JSONL files (metrics.jsonl, rollouts.jsonl, the task splits and the corpus).
 *
 * Writers append one whole line per record, so a process killed mid-write leaves at most its last line
 * torn: text after the final newline that does not parse. That line was never committed and is treated as
 * absent. Any other line that does not parse is damage and an error naming the file and line number.
 * Blank lines are skipped; line numbers always count every line of the file (1-based). Files that are
 * written once and never appended (the committed task splits) pass `strict`: a torn tail is damage there.
 */
import * as fs from 'fs';
import { writeFileAtomic } from './atomic';

export interface JsonlLine<T> {
  /** 1-based line number in the file. */
  line: number;
  value: T;
}

export interface JsonlRead<T> {
  rows: JsonlLine<T>[];
  /** Bytes of the file up to the end of the last complete row (a torn tail excluded). */
  completeBytes: number;
  /** True when the file ended in a torn line that was ignored. */
  torn: boolean;
}

/** Parse `text` as JSONL (see the file comment for the torn-tail rule). `file` names it in errors. */
export function parseJsonl<T = unknown>(text: string, file: string, strict = false): JsonlRead<T> {
  const rows: JsonlLine<T>[] = [];
  const parts = text.split('\n');
  let torn = false;
  let bytes = 0;
  let completeBytes = 0;
  for (let i = 0; i < parts.length; i++) {
    const s = parts[i];
    const last = i === parts.length - 1;
    bytes += Buffer.byteLength(s, 'utf8') + (last ? 0 : 1);
    if (s.trim() === '') {
      if (!last) completeBytes = bytes;
      continue;
    }
    let value: T;
    try {
      value = JSON.parse(s) as T;
    } catch (e) {
      // the final piece has no newline after it: a write that was cut short
      if (last && !strict) { torn = true; break; }
      throw new Error(`${file}:${i + 1}: invalid JSON (${(e as Error).message})`);
    }
    rows.push({ line: i + 1, value });
    completeBytes = bytes;
  }
  return { rows, completeBytes, torn };
}

/** Read a JSONL file; `missing` is the error text when it does not exist. */
export function readJsonl<T = unknown>(file: string, missing = `file not found: ${file}`,
  strict = false): JsonlRead<T> {
  if (!fs.existsSync(file)) throw new Error(missing);
  return parseJsonl<T>(fs.readFileSync(file, 'utf8'), file, strict);
}

/** The records of a JSONL file, in order (a torn final line is absent). */
export function readJsonlValues<T = unknown>(file: string, missing?: string): T[] {
  return readJsonl<T>(file, missing).rows.map((r) => r.value);
}

/**
 * Cut a JSONL file back to its first `n` records by rewriting it (temp file + rename). Truncating in place
 * would be shorter to write, but truncate() to a length past the end extends the file with NUL bytes; a
 * rewrite can only ever keep what is there. Throws (naming the file) when it holds fewer than `n` records.
 */
export function keepFirstRecords<T = unknown>(file: string, n: number): T[] {
  const { rows } = fs.existsSync(file) ? readJsonl<T>(file) : { rows: [] as JsonlLine<T>[] };
  if (rows.length < n) throw new Error(`${file} holds ${rows.length} records, expected at least ${n}`);
  const kept = rows.slice(0, n).map((r) => r.value);
  writeFileAtomic(file, kept.map((v) => JSON.stringify(v) + '\n').join(''));
  return kept;
}

/**
 * Cut a JSONL file back to its first `bytes` bytes by rewriting it (byte-exact, see keepFirstRecords).
 * The cut must fall on a line end: anything else means the file is not the one the byte count was taken of.
 */
export function keepFirstBytes(file: string, bytes: number): void {
  const buf = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
  if (buf.byteLength < bytes) throw new Error(`${file} has ${buf.byteLength} bytes, expected at least ${bytes}`);
  if (bytes > 0 && buf[bytes - 1] !== 0x0a) throw new Error(`${file}: byte ${bytes} is not the end of a line`);
  writeFileAtomic(file, buf.subarray(0, bytes));
}
