/**
 * One writer per folder: a lock file `.lock` holding the owner's pid. It is created with O_EXCL ('wx'), so
 * of two processes racing for a free folder exactly one wins. A lock whose pid no longer runs was left by a
 * killed process (kill -9 runs no cleanup): it is stale, and the next taker removes it. The owner removes
 * its lock when it releases it or when the process exits normally.
 */
import * as fs from 'fs';
import * as path from 'path';
import { EXIT, Refusal, writing } from './errors';

export const LOCK_FILE = '.lock';

export interface LockInfo {
  pid: number;
  started: string;
}

/** Whether a process with this pid runs (signal 0 checks without sending anything). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // runs, under another user
  }
}

function readLock(file: string): LockInfo | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo;
    return typeof v?.pid === 'number' ? v : null;
  } catch {
    return null; // gone, or torn by a kill between create and write: treated as stale
  }
}

/** The live process holding `dir`'s lock, or null when it is free (or stale). */
export function lockHolder(dir: string): LockInfo | null {
  const info = readLock(path.join(dir, LOCK_FILE));
  return info && info.pid !== process.pid && pidAlive(info.pid) ? info : null;
}

/** The command line of a running process, shortened, where the system shows it (Linux /proc); null elsewhere. */
function commandOf(pid: number): string | null {
  try {
    const words = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return words.length > 80 ? words.slice(0, 77) + '...' : words || null;
  } catch {
    return null;
  }
}

/**
 * The refusal for a folder held by a live process (exit 3, the same wherever the race is lost). A pid can be
 * reused after a killed run (kill -9 leaves its lock): the message says so, with the process's command line
 * when it can, and how to take the folder back.
 */
export function inUse(what: string, dir: string, info: LockInfo): Refusal {
  const file = path.join(dir, LOCK_FILE);
  const cmd = commandOf(info.pid);
  const now = cmd ? `; that pid now runs: ${cmd}` : '';
  return new Refusal(`${what} ${dir} is in use by process ${info.pid} (since ${info.started}, as its lock file ` +
    `${file} records${now}); it may not be a toolrl run if that one was killed and its pid reused: check with ` +
    `\`ps -p ${info.pid} -o pid,lstart,args\`, and if it is not a run, remove ${file}`, EXIT.inUse);
}

/**
 * Take `dir`'s lock (creating the folder) or throw naming the folder and the holder's pid. `what` names
 * the folder in the message (e.g. "run folder"). Returns the release function.
 */
export function acquireLock(dir: string, what = 'folder'): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = fs.openSync(file, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const info = readLock(file);
      if (info && pidAlive(info.pid)) throw inUse(what, dir, info);
      // Stale. Remove it only if it is still the file we judged (another taker may have replaced it).
      const again = readLock(file);
      if ((again?.pid ?? null) === (info?.pid ?? null)) fs.rmSync(file, { force: true });
      continue;
    }
    try {
      writing(file, () => fs.writeSync(fd, JSON.stringify({ pid: process.pid,
        started: new Date().toISOString() } as LockInfo) + '\n'));
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(file, { force: true });
      throw e;
    }
    fs.closeSync(fd);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      process.removeListener('exit', release);
      if (readLock(file)?.pid === process.pid) fs.rmSync(file, { force: true });
    };
    process.on('exit', release);
    return release;
  }
  throw new Error(`${what} ${dir}: could not take the lock ${file}`);
}
