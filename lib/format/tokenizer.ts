/**
 * A closed-vocabulary tokenizer for the templated language of the toy world (docs/design.md B, "Tokens").
 *
 * Why not BPE? The study needs three properties that a hand-made pre-tokenizer gives for free:
 * 1. every chat tag (`<tool_call>`, `<|im_end|>`, ...) is exactly one token, and so is `{"`, the healthy start
 *    of a JSON call, so the next-token probe of A.5 (p(`{"`) vs p(`<|im_end|>`) vs p(`<tool_call>`)) is
 *    well defined;
 * 2. digits are one token each, so numbers in arguments are spelled, not memorised;
 * 3. an identifier is made of sub-word pieces shared across API families: `send_message` is `send` `_message`,
 *    `set_reminder_time` is `set` `_reminder` `_time`. An API family never trained on (content-OOD) then has
 *    names made of pieces the policy has written elsewhere (`_reminder` from a corpus API's `snooze_reminder`),
 *    so a name can be copied from the `<tools>` block piece by piece. (An earlier layout made every training
 *    identifier one token: names were single choices, but an unseen family's names were spelled from pieces
 *    the policy had never emitted, and content-OOD accuracy was 0.)
 *
 * Pre-tokenization is greedy, left to right; at each position the FIRST rule that matches wins:
 *   1. one of the 8 special tags (literal);
 *   2. a multi-character JSON punctuation piece (longest first): `": "`, `"}}`, `{"`, ...;
 *   3. a word `[A-Za-z]+` with at most ONE leading space merged into it (` word` and `word` are distinct),
 *      or an identifier's continuation `_[A-Za-z]+` (an underscore and the letters after it);
 *   4. a digit;
 *   5. any other single character (one code point).
 * The vocabulary is `<pad>`, `<unk>`, the tags, the punctuation pieces, digits, printable ASCII and `\n`
 * (the "base" pieces: always present), then the word pieces seen in a corpus, sorted.
 */
import { createHash } from 'crypto';
import { readFileSync, existsSync } from 'fs';
import { resolve } from 'path';
import { IM_END, IM_START, PAD, UNK, SPECIAL_TOKENS } from './tokens';

/**
 * The tokens a decoder with "skip special tokens" drops: Qwen2.5's special tokens as this vocabulary has them
 * (`<|im_start|>`, `<|im_end|>`, the padding, and `<unk>`, which no text spells); the tool tags are ordinary
 * added tokens there and stay (lib/train/pipeline.ts, E2).
 */
export const SKIPPED_ON_DECODE: readonly string[] = [PAD, UNK, IM_START, IM_END];

/**
 * Multi-character JSON punctuation, longest first. With these, `{"name": "cd", "arguments": {"folder": "doc"}}`
 * is 12 tokens: `{"` name `": "` cd `", "` arguments `": ` `{"` folder `": "` doc `"}}`.
 */
export const PUNCT_PIECES: readonly string[] = ['": "', '", "', '"}}', '": ', ', "', '{"', '"}', '}}', '["', '"]'];

const WORD_RE = /^( ?[A-Za-z]+|_[A-Za-z]+)$/;

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** The pieces every vocabulary starts with, in id order: `<pad>`=0, `<unk>`=1, tags 2..9, punctuation, chars. */
export function basePieces(): string[] {
  const out: string[] = [PAD, UNK, ...SPECIAL_TOKENS, ...PUNCT_PIECES];
  for (let d = 0; d <= 9; d++) out.push(String(d));
  out.push('\n');
  for (let c = 32; c <= 126; c++) {
    const ch = String.fromCharCode(c);
    if (!isDigit(c)) out.push(ch);
  }
  return out;
}

/**
 * Split text into pieces by the 5 rules above. Lossless: `pretokenize(s).join('') === s` for every string.
 * Runs in O(length * (number of tags + punctuation pieces)), fine for 10k-character garbage.
 */
export function pretokenize(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  outer: while (i < n) {
    const c = text.charCodeAt(i);
    // 1. tags all start with '<'.
    if (c === 60) {
      for (const tag of SPECIAL_TOKENS) {
        if (text.startsWith(tag, i)) {
          out.push(tag);
          i += tag.length;
          continue outer;
        }
      }
    }
    // 2. punctuation pieces start with '"', '{', '}', ',', '['.
    if (c === 34 || c === 123 || c === 125 || c === 44 || c === 91) {
      for (const p of PUNCT_PIECES) {
        if (text.startsWith(p, i)) {
          out.push(p);
          i += p.length;
          continue outer;
        }
      }
    }
    // 3. a word, optionally with one leading space; or `_` + letters (an identifier's next part).
    const wordStart = c === 32 && i + 1 < n && isLetter(text.charCodeAt(i + 1)) ? i + 1
      : isLetter(c) || (c === 95 && i + 1 < n && isLetter(text.charCodeAt(i + 1))) ? i + (c === 95 ? 1 : 0) : -1;
    if (wordStart >= 0) {
      let j = wordStart + 1;
      while (j < n && isLetter(text.charCodeAt(j))) j++;
      out.push(text.slice(i, j));
      i = j;
      continue;
    }
    // 4 + 5. a digit or any other single character; keep surrogate pairs together (one code point).
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out.push(text.slice(i, i + 2));
        i += 2;
        continue;
      }
    }
    out.push(text[i]);
    i++;
  }
  return out;
}

export interface TokenizerJSON {
  version: 1;
  pieces: string[];
}

export class Tokenizer {
  /** All pieces, index = token id. */
  readonly pieces: readonly string[];
  readonly size: number;
  /** First 16 hex chars of sha256 over the piece list: a checkpoint records it to refuse a mismatched vocab. */
  readonly fingerprint: string;
  private readonly ids: Map<string, number>;
  private readonly padId: number;
  private readonly unkId: number;

  /** `pieces` is the full vocabulary in id order; it must hold `<pad>`, `<unk>` and the 8 tags, no duplicates. */
  constructor(pieces: string[]) {
    this.ids = new Map();
    pieces.forEach((p, i) => {
      if (typeof p !== 'string' || p.length === 0) throw new Error(`Tokenizer: piece ${i} is not a non-empty string`);
      if (this.ids.has(p)) throw new Error(`Tokenizer: duplicate piece ${JSON.stringify(p)} at id ${i}`);
      this.ids.set(p, i);
    });
    for (const required of [PAD, UNK, ...SPECIAL_TOKENS]) {
      if (!this.ids.has(required)) throw new Error(`Tokenizer: vocabulary lacks the control token ${required}`);
    }
    this.pieces = pieces.slice();
    this.size = pieces.length;
    this.padId = this.ids.get(PAD)!;
    this.unkId = this.ids.get(UNK)!;
    this.fingerprint = createHash('sha256').update(JSON.stringify(this.pieces)).digest('hex').slice(0, 16);
  }

  /**
   * Build a vocabulary: the base pieces plus every word piece (` word`, `word`, `_word`) seen at least
   * `minCount` times in `texts`, sorted by code unit so the same corpus always gives the same ids.
   */
  static fromTexts(texts: Iterable<string>, opts: { minCount?: number } = {}): Tokenizer {
    const minCount = opts.minCount ?? 1;
    const counts = new Map<string, number>();
    for (const text of texts) {
      for (const p of pretokenize(text)) if (WORD_RE.test(p)) counts.set(p, (counts.get(p) ?? 0) + 1);
    }
    const base = basePieces();
    const baseSet = new Set(base);
    const words: string[] = [];
    counts.forEach((n, p) => {
      if (n >= minCount && !baseSet.has(p)) words.push(p);
    });
    words.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return new Tokenizer(base.concat(words));
  }

  static fromJSON(obj: unknown): Tokenizer {
    const o = obj as Partial<TokenizerJSON> | null;
    if (!o || typeof o !== 'object' || o.version !== 1 || !Array.isArray(o.pieces)) {
      throw new Error('Tokenizer.fromJSON: expected {"version": 1, "pieces": [...]}');
    }
    return new Tokenizer(o.pieces);
  }

  toJSON(): TokenizerJSON {
    return { version: 1, pieces: this.pieces.slice() };
  }

  pretokenize(text: string): string[] {
    return pretokenize(text);
  }

  /**
   * Text -> ids. A piece outside the vocabulary falls back, in order: ` word` or `_word` missing but `word`
   * known is spelled ` ` + `word` or `_` + `word` (so a vocabulary built with minCount > 1 still round-trips
   * common words); whatever is still unknown becomes `<unk>`.
   */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const p of pretokenize(text)) this.encodePiece(p, out);
    return out;
  }

  private encodePiece(p: string, out: number[]): boolean {
    const id = this.ids.get(p);
    if (id !== undefined) {
      out.push(id);
      return true;
    }
    const lead = p.charCodeAt(0);
    if (p.length > 1 && (lead === 32 || lead === 95)) {
      const bare = this.ids.get(p.slice(1));
      if (bare !== undefined) {
        out.push(this.ids.get(p[0])!, bare);
        return true;
      }
    }
    out.push(this.unkId);
    return false;
  }

  /**
   * Ids -> text. `<pad>` decodes to '' (it is not text); `<unk>` decodes to the literal '<unk>'. With
   * `skipSpecial`, every token of SKIPPED_ON_DECODE decodes to '' (what an inference server returns).
   */
  decode(ids: ArrayLike<number>, opts: { skipSpecial?: boolean } = {}): string {
    const skip = opts.skipSpecial ? new Set(SKIPPED_ON_DECODE.map((p) => this.ids.get(p)!)) : null;
    let s = '';
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id === this.padId || (skip !== null && skip.has(id))) continue;
      s += this.piece(id);
    }
    return s;
  }

  /**
   * Text -> ids as a BPE tokenizer encodes any text: like `encode`, but a piece outside the vocabulary is spelled
   * with the longest known pieces, down to single characters, so `startls` (two sampled pieces, `start` `ls`)
   * comes back as `start` `ls` rather than `<unk>`; only a character the vocabulary lacks (non-ASCII) is `<unk>`.
   */
  encodeText(text: string): number[] {
    const out: number[] = [];
    for (const p of pretokenize(text)) {
      if (this.encodePiece(p, out)) continue;
      out.pop(); // the <unk> encodePiece wrote
      for (let i = 0; i < p.length; ) {
        let j = p.length;
        while (j > i + 1 && !this.ids.has(p.slice(i, j))) j--;
        out.push(this.ids.get(p.slice(i, j)) ?? this.unkId);
        i = j;
      }
    }
    return out;
  }

  /** Id of an exact piece; throws for a piece outside the vocabulary (use encode for arbitrary text). */
  id(piece: string): number {
    const id = this.ids.get(piece);
    if (id === undefined) throw new Error(`Tokenizer.id: unknown piece ${JSON.stringify(piece)}`);
    return id;
  }

  has(piece: string): boolean {
    return this.ids.has(piece);
  }

  piece(id: number): string {
    if (!Number.isInteger(id) || id < 0 || id >= this.size) {
      throw new Error(`Tokenizer.piece: id ${id} out of range [0, ${this.size})`);
    }
    return this.pieces[id];
  }

  /** The distinct pieces of `text` that would encode to (or contain) `<unk>`, in order of first appearance. */
  unknownPieces(text: string): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    const scratch: number[] = [];
    for (const p of pretokenize(text)) {
      if (this.ids.has(p) || seen.has(p)) continue;
      scratch.length = 0;
      if (!this.encodePiece(p, scratch)) {
        seen.add(p);
        out.push(p);
      }
    }
    return out;
  }
}

/** Read the committed vocabulary (written by `npx toolrl data`), path relative to the working directory. */
export function loadTokenizer(path: string = 'data/vocab.json'): Tokenizer {
  const full = resolve(process.cwd(), path);
  if (!existsSync(full)) {
    throw new Error(`loadTokenizer: vocabulary file ${full} not found; run \`npx toolrl data\` to generate it`);
  }
  let obj: unknown;
  try {
    obj = JSON.parse(readFileSync(full, 'utf8'));
  } catch (e) {
    throw new Error(`loadTokenizer: ${full} is not valid JSON (${(e as Error).message}); run \`npx toolrl data\``);
  }
  try {
    return Tokenizer.fromJSON(obj);
  } catch (e) {
    throw new Error(`loadTokenizer: ${full}: ${(e as Error).message}`);
  }
}
