/**
 * Degenerate repetition: how much of a message is a loop (docs/design.md A.5, "message modes").
 *
 * A collapsing policy in this lab often writes one short piece over and over (` to to to ...`, `_message_message...`,
 * `(symbol(symbol(symbol...`) until the token cap. Such a message is neither a reply to the user nor a call, so
 * the structural states must not call it a healthy response. The measure is the share of the message's characters
 * (whitespace aside) that lie inside a back-to-back repeat: some substring of 1 to MAX_PERIOD characters written at
 * least MIN_COPIES times in a row. Each control tag counts as one character (a private-use code point), so a tag
 * inside a loop is a piece of it like any other.
 *
 * Why these numbers (measured on the committed rollouts-sample.jsonl, `npx toolrl report`'s "loop rule" table):
 * at RL step 1, before any training has moved the bases, a share >= LOOP_SHARE flags 0.1% of the 24,865 sampled
 * messages of both stores, each of them a repetition when read; in the late messages of the collapsed vanilla runs
 * the share is bimodal (most messages below 0.1 or at 0.9 and above), so the threshold sits in the valley.
 * MAX_PERIOD 24 covers the longest pieces seen looping (`"get_fuelname": ` is 16 characters).
 *
 * Cost: one pass per period, O(MAX_PERIOD x length), on at most LOOP_WINDOW characters; no regex, no backtracking.
 */
import { CONTROL_TOKENS } from './tokens';

/** Longest repeated piece, in characters (a tag is one). */
export const MAX_PERIOD = 24;
/** A repeat needs this many copies back to back. */
export const MIN_COPIES = 3;
/** A message is a repetition loop from this share of its characters in repeats. */
export const LOOP_SHARE = 0.5;
/** ... if it has at least this many characters besides whitespace: `aaa` is not a loop worth a name. */
export const LOOP_MIN_CHARS = 12;
/**
 * The loop rule reads the first this many characters of a message: a policy message is at most 64 tokens (a few
 * hundred characters), and a pathological string of megabytes classifies in bounded time.
 */
export const LOOP_WINDOW = 4096;

/** The message's code units, every control tag folded into one private-use code of its own. */
function foldTags(s: string): Uint16Array {
  const out = new Uint16Array(s.length);
  let n = 0;
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i);
    const tag = c === 60 /* < */ ? CONTROL_TOKENS.findIndex((t) => s.startsWith(t, i)) : -1;
    if (tag >= 0) {
      out[n++] = 0xe000 + tag;
      i += CONTROL_TOKENS[tag].length;
    } else {
      out[n++] = c;
      i++;
    }
  }
  return out.subarray(0, n);
}

/** Whitespace as String.prototype.trim sees it, by code unit (the common ones; a loop of exotic spaces is not text). */
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || c === 0xfeff;

/**
 * Share of the message's non-whitespace characters (tags folded) inside back-to-back repeats of a piece of
 * <= MAX_PERIOD characters with >= MIN_COPIES copies, the piece holding something besides whitespace (a run of
 * spaces is layout, not a loop); 0 for a message without such characters. With `stopAt`, returns as soon as the
 * share reaches it (the loop rule needs no more).
 *
 * For a period p, positions k with s[k] === s[k + p] form runs; a run of length L starting at k0 means that
 * s[k0 .. k0 + L + p) is a piece of length p written (L + p) / p times, so it counts once L >= (MIN_COPIES - 1) p.
 */
export function repetitionShare(content: string, stopAt = Infinity): number {
  const s = foldTags(content);
  const n = s.length;
  let text = 0;
  for (let i = 0; i < n; i++) if (!isSpace(s[i])) text++;
  if (text === 0) return 0;
  const covered = new Uint8Array(n);
  let inRepeat = 0;
  const mark = (from: number, to: number) => {
    let solid = false;
    for (let i = from; i < to && !solid; i++) solid = !isSpace(s[i]);
    if (!solid) return;
    for (let i = from; i < to; i++) {
      if (covered[i] === 0 && !isSpace(s[i])) inRepeat++;
      covered[i] = 1;
    }
  };
  for (let p = 1; p <= MAX_PERIOD && 2 * p < n; p++) {
    let runStart = -1;
    for (let k = 0; k + p <= n; k++) {
      if (k + p < n && s[k] === s[k + p]) {
        if (runStart < 0) runStart = k;
        continue;
      }
      if (runStart >= 0 && k - runStart >= (MIN_COPIES - 1) * p) mark(runStart, k + p);
      runStart = -1;
    }
    if (inRepeat / text >= stopAt) break;
  }
  return inRepeat / text;
}

/** The loop rule: at least LOOP_MIN_CHARS characters besides whitespace, and at least LOOP_SHARE of them in repeats. */
export function isRepetitionLoop(content: string): boolean {
  let text = 0;
  for (let i = 0; i < content.length && text < LOOP_MIN_CHARS; i++) if (!isSpace(content.charCodeAt(i))) text++;
  return text >= LOOP_MIN_CHARS && repetitionShare(content.slice(0, LOOP_WINDOW), LOOP_SHARE) >= LOOP_SHARE;
}
