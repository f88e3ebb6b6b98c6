/**
 * A small file system, after BFCL-V3's GorillaFileSystem (docs/design.md A.1): a tree of folders and text files and a
 * current directory. `cd` changes state, so "cd then ls" is the canonical multi-step dependency.
 *
 * State: `{cwd: string[], root: Dir}` (cwd is the path from the top folder) where a Dir maps a name to a Dir (a
 * folder, JSON object) or a string (a file and its content).
 */
import type { JsonValue } from '../../format/types';
import { Rng } from '../../prng';
import { ApiError, ApiFamily, Args, tool } from './base';
import { FILE_EXTS, FILE_STEMS, FILE_TEXTS, FOLDERS } from '../pools';

export type Dir = { [name: string]: JsonValue };
export type FsState = { cwd: string[]; root: Dir };

export const FS_TOOLS = [
  tool('cd', 'change the current folder', ['folder', 'string']),
  tool('ls', 'list the current folder'),
  tool('mkdir', 'make a new folder', ['folder', 'string']),
  tool('cat', 'read a file', ['file_name', 'string']),
  tool('mv', 'move or rename an item', ['source', 'string'], ['destination', 'string']),
  tool('rm', 'delete a file', ['file_name', 'string']),
];

/** Name of the top folder, shown by `cd ..` back to the top. */
export const FS_TOP = 'home';

const NAME_RE = /^[A-Za-z0-9_.]{1,40}$/;

export function isDir(v: JsonValue | undefined): v is Dir {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class FileSystem extends ApiFamily<FsState> {
  readonly name = 'file_system';
  readonly tools = FS_TOOLS;

  /** The folder object the cursor is in (a live reference into the state). */
  cwdDir(): Dir {
    let d: Dir = this.state.root;
    for (const part of this.state.cwd) {
      const next = d[part];
      if (!isDir(next)) throw new ApiError('current folder is missing');
      d = next;
    }
    return d;
  }

  protected handle(name: string, a: Args): JsonValue {
    const here = this.cwdDir();
    switch (name) {
      case 'cd': {
        const f = a.folder as string;
        if (f === '..') {
          if (this.state.cwd.length === 0) throw new ApiError('already at the top folder');
          this.state.cwd.pop();
        } else {
          if (!isDir(here[f])) throw new ApiError(`no folder named ${f}`);
          this.state.cwd.push(f);
        }
        const cwd = this.state.cwd;
        return { current_directory: cwd.length ? cwd[cwd.length - 1] : FS_TOP };
      }
      case 'ls':
        return { items: Object.keys(here).sort() };
      case 'mkdir': {
        const n = a.folder as string;
        if (!NAME_RE.test(n) || n === '..') throw new ApiError(`bad name ${n}`);
        if (here[n] !== undefined) throw new ApiError(`${n} already exists`);
        here[n] = {};
        return { created: n };
      }
      case 'cat': {
        const f = a.file_name as string;
        const v = here[f];
        if (typeof v !== 'string') throw new ApiError(`no file named ${f}`);
        return { content: v };
      }
      case 'mv': {
        const s = a.source as string;
        const d = a.destination as string;
        if (here[s] === undefined) throw new ApiError(`no item named ${s}`);
        if (s === d) throw new ApiError('source and destination are the same');
        const target = here[d];
        if (isDir(target)) {
          if (target[s] !== undefined) throw new ApiError(`${s} already exists in ${d}`);
          target[s] = here[s];
        } else {
          if (target !== undefined) throw new ApiError(`${d} already exists`);
          if (!NAME_RE.test(d) || d === '..') throw new ApiError(`bad name ${d}`);
          here[d] = here[s];
        }
        delete here[s];
        return { moved: s, to: d };
      }
      case 'rm': {
        const f = a.file_name as string;
        if (typeof here[f] !== 'string') throw new ApiError(`no file named ${f}`);
        delete here[f];
        return { removed: f };
      }
    }
    throw new ApiError(`unknown function ${name}`);
  }

  /**
   * A random tree: 2-4 folders at the top, 1-3 files each, 1-2 files at the top. `long` (long_context, docs/design.md
   * A.1) adds one folder with 25-40 files so that `ls` there returns a long observation.
   */
  static randomState(rng: Rng, opts: { long?: boolean } = {}): FsState {
    const root: Dir = {};
    const folders = rng.sample(FOLDERS, rng.int(2, 4));
    const usedFiles = (): string => `${rng.pick(FILE_STEMS)}.${rng.pick(FILE_EXTS)}`;
    for (const f of folders) {
      const d: Dir = {};
      for (let i = rng.int(1, 3); i > 0; i--) d[usedFiles()] = rng.pick(FILE_TEXTS);
      root[f] = d;
    }
    for (let i = rng.int(1, 2); i > 0; i--) {
      const n = usedFiles();
      if (root[n] === undefined) root[n] = rng.pick(FILE_TEXTS);
    }
    if (opts.long) {
      const big = root[folders[0]] as Dir;
      const target = rng.int(25, 40);
      while (Object.keys(big).length < target) {
        big[`${rng.pick(FILE_STEMS)}_${rng.int(1, 99)}.${rng.pick(FILE_EXTS)}`] = rng.pick(FILE_TEXTS);
      }
    }
    return { cwd: [], root };
  }
}
