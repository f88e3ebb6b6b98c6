/**
 * Input checks of the commands, run before any backend starts: whatever a flag names (a data folder, a
 * checkpoint) is read and validated here, and a failure is a UsageError (exit 2) naming the flag, one line.
 */
import * as path from 'path';
import { UsageError } from './args';
import { loadTokenizer } from '../format/tokenizer';
import { verifyCheckpoint } from '../model/checkpoint';

/** Run `fn`, which reads what `flag` names; any error becomes a UsageError naming the flag. */
export function inputOf<T>(flag: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw e instanceof UsageError ? e : new UsageError(`${flag}: ${(e as Error).message}`);
  }
}

/** A checkpoint folder's files (format, vocabulary of `dataDir`, size, content hash), checked without tfjs. */
export function checkCheckpointArg(dir: string, dataDir: string): void {
  const tok = inputOf('--data', () => loadTokenizer(path.join(dataDir, 'vocab.json')));
  inputOf('--checkpoint', () => verifyCheckpoint(dir, { expectVocabFingerprint: tok.fingerprint }));
}
