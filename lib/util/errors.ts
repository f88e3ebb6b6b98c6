/**
 * Errors that say what went wrong and how the command line exits on them.
 *
 * A Refusal is a request the tool declines before doing any work (a bad argument, an input file that does not
 * validate, a folder that is in use or is not the tool's): its `exitCode` tells the kinds apart, so a script
 * (or the sweep that launched a run) can act on the kind without parsing the message. Anything else that
 * fails while working exits 1.
 *
 * Node's errors for a failed write through a file descriptor (ENOSPC, EFBIG, EIO) name no file:
 * `namePath` adds the path the caller was writing, so "no space left on device" says where.
 */

/** The exit codes of `toolrl` (every command), one per kind of refusal. */
export const EXIT = {
  /** A failure while working (I/O error, damaged state found mid-run, a bug). */
  failure: 1,
  /** A bad argument, config value or input file (named), refused before anything starts. */
  usage: 2,
  /** The run folder is in use by another live process (its lock). */
  inUse: 3,
  /** The run folder holds results: --force starts again, --resume continues a killed run. */
  holdsResults: 4,
  /** The folder is not a run folder of this tool (files it did not write, no run.json of ours): never cleared. */
  notARunFolder: 5,
  /** --resume has nothing to continue: no resume state, a finished run, or another run's state. */
  cannotResume: 6,
} as const;

/** What `toolrl <command> --help` prints about exit codes. */
export const EXIT_HELP = 'exit codes: 0 done; 1 failed while running; 2 bad argument, config or input file; ' +
  '3 run folder in use by another process; 4 run folder holds results (--force or --resume); ' +
  '5 folder holds files the tool did not write (never cleared); 6 --resume has nothing to continue';

export class Refusal extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

/** A bad argument, config or input: exit 2, before any backend starts. */
export class InputError extends Refusal {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The exit code for an error thrown by a command. */
export function exitCodeOf(e: unknown): number {
  return e instanceof Refusal ? e.exitCode : EXIT.failure;
}

/** `e` with `file` in its message when it is a file-system error that names no path; anything else as it is. */
export function namePath(file: string, e: unknown): unknown {
  const err = e as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof err.code !== 'string') return e;
  if (err.message.includes(file) || (err.path !== undefined && err.message.includes(err.path))) return e;
  const named = new Error(`cannot write ${err.path ?? file}: ${err.message}`) as NodeJS.ErrnoException;
  named.code = err.code;
  named.path = err.path ?? file;
  return named;
}

/** Run `fn`, which writes `file`; a file-system error from it names the path. */
export function writing<T>(file: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw namePath(file, e);
  }
}
