/**
 * Atomic file replacement: write a temp file next to the target, flush it, then rename it over the target.
 * rename() within one folder is atomic on POSIX file systems, so a reader (or a run killed mid-write) sees
 * either the old file or the new one, never half of either. A failed write (disk full, a file-size limit)
 * removes its temp file and names the target in the error.
 */
import * as fs from 'fs';
import * as path from 'path';
import { namePath } from './errors';

/** The temp name writeFileAtomic uses for `file` (run folders count it among the tool's own entries). */
export const atomicTempName = (base: string, pid = process.pid): string => `.${base}.${pid}.tmp`;

export function writeFileAtomic(file: string, data: string | Buffer): void {
  const tmp = path.join(path.dirname(file), atomicTempName(path.basename(file)));
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw namePath(file, e);
  }
}

/** `value` as pretty JSON (2-space indent, final newline), written atomically. */
export function writeJsonAtomic(file: string, value: unknown): void {
  writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n');
}

/** Parse a JSON file; errors name the file and what is wrong (missing, or where the JSON breaks). */
export function readJsonFile<T = unknown>(file: string, what = 'file'): T {
  if (!fs.existsSync(file)) throw new Error(`${what} not found: ${file}`);
  const text = fs.readFileSync(file, 'utf8');
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new Error(`${file}: ${what} is not valid JSON (${(e as Error).message})`);
  }
}
