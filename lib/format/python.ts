/**
 * The python-list call syntax of format-OOD (docs/design.md A.7): `[cd(folder='doc'), ls(a=True)]`.
 *
 * Rendering writes Python literals (single-quoted strings, True/False/None). Parsing is a small hand-written
 * recursive-descent parser: model output is untrusted text, so there is no eval, nesting is capped, and every
 * failure is returned as a message, never thrown to the caller.
 *
 * Grammar (whitespace allowed between tokens):
 *   list   := '[' (call (',' call)* ','?)? ']'
 *   call   := name '(' (kwarg (',' kwarg)* ','?)? ')'        name := [A-Za-z_][A-Za-z0-9_.]*
 *   kwarg  := ident '=' value
 *   value  := string | number | True | False | None | '[' values ']' | '(' values ')' | '{' key: value, ... '}'
 */
import { JsonValue, ToolCall } from './types';

const MAX_DEPTH = 64;

/** Python literal for a JSON value: `'doc'`, `3`, `-1.5`, `True`, `None`, `[1, 2]`, `{'a': 1}`. */
export function toPythonText(v: JsonValue): string {
  if (v === null) return 'None';
  if (typeof v === 'string') return pyString(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (Array.isArray(v)) return '[' + v.map(toPythonText).join(', ') + ']';
  const parts: string[] = [];
  for (const k of Object.keys(v)) {
    if (v[k] === undefined) continue;
    parts.push(pyString(k) + ': ' + toPythonText(v[k]));
  }
  return '{' + parts.join(', ') + '}';
}

function pyString(s: string): string {
  let out = "'";
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    const c = s.charCodeAt(i);
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 32 || c === 127) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + "'";
}

/** `name(a=1, b='x')`. Argument names are assumed to be Python identifiers. */
export function renderPythonCall(c: ToolCall): string {
  const args = Object.keys(c.arguments)
    .filter((k) => c.arguments[k] !== undefined)
    .map((k) => `${k}=${toPythonText(c.arguments[k])}`);
  return `${c.name}(${args.join(', ')})`;
}

export interface PythonListParse {
  calls: ToolCall[];
  /** At most one error: after a syntax error the rest of the list cannot be trusted. */
  errors: string[];
  /** Index just past the closing `]` (or text.length when the list never closed). */
  end: number;
}

class ParseError extends Error {}

/** Parse a python call list starting at `start` (which must point at `[` after optional whitespace). */
export function parsePythonCallList(text: string, start = 0): PythonListParse {
  const p = new Parser(text, start);
  const calls: ToolCall[] = [];
  try {
    p.ws();
    p.expect('[');
    p.ws();
    if (p.peek() === ']') {
      p.pos++;
      return { calls, errors: [], end: p.pos };
    }
    for (;;) {
      calls.push(p.call());
      p.ws();
      const c = p.peek();
      if (c === ',') {
        p.pos++;
        p.ws();
        if (p.peek() === ']') {
          p.pos++;
          break;
        }
        continue;
      }
      if (c === ']') {
        p.pos++;
        break;
      }
      p.fail(c === '' ? 'unterminated call list, expected "]"' : `expected "," or "]" but found ${JSON.stringify(c)}`);
    }
    return { calls, errors: [], end: p.pos };
  } catch (e) {
    const msg = e instanceof ParseError ? e.message : `internal parser error (${String((e as Error)?.message ?? e)})`;
    return { calls, errors: [`Error: could not parse tool call: ${msg}`], end: text.length };
  }
}

class Parser {
  depth = 0;
  constructor(readonly s: string, public pos: number) {}

  peek(): string {
    return this.pos < this.s.length ? this.s[this.pos] : '';
  }

  fail(msg: string): never {
    throw new ParseError(`${msg} at position ${this.pos}`);
  }

  ws(): void {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos])) this.pos++;
  }

  expect(ch: string): void {
    if (this.peek() !== ch) {
      const got = this.peek();
      this.fail(`expected ${JSON.stringify(ch)} but found ${got === '' ? 'end of text' : JSON.stringify(got)}`);
    }
    this.pos++;
  }

  ident(allowDots: boolean): string {
    const re = allowDots ? /[A-Za-z0-9_.]/ : /[A-Za-z0-9_]/;
    const start = this.pos;
    if (!/[A-Za-z_]/.test(this.peek())) this.fail('expected a name');
    while (this.pos < this.s.length && re.test(this.s[this.pos])) this.pos++;
    return this.s.slice(start, this.pos);
  }

  call(): ToolCall {
    const name = this.ident(true);
    this.ws();
    this.expect('(');
    const args: { [key: string]: JsonValue } = {};
    this.ws();
    if (this.peek() === ')') {
      this.pos++;
      return { name, arguments: args };
    }
    for (;;) {
      this.ws();
      if (!/[A-Za-z_]/.test(this.peek())) this.fail(`expected a keyword argument in ${name}()`);
      const key = this.ident(false);
      this.ws();
      if (this.peek() !== '=') this.fail(`positional arguments are not supported in ${name}(); write ${key}=value`);
      this.pos++;
      this.ws();
      if (Object.prototype.hasOwnProperty.call(args, key)) this.fail(`argument ${key} repeated in ${name}()`);
      args[key] = this.value();
      this.ws();
      const c = this.peek();
      if (c === ',') {
        this.pos++;
        this.ws();
        if (this.peek() === ')') {
          this.pos++;
          break;
        }
        continue;
      }
      if (c === ')') {
        this.pos++;
        break;
      }
      this.fail(c === '' ? `unterminated call ${name}(` : `expected "," or ")" but found ${JSON.stringify(c)}`);
    }
    return { name, arguments: args };
  }

  value(): JsonValue {
    const c = this.peek();
    if (c === "'" || c === '"') return this.string();
    if (c === '-' || c === '+' || c === '.' || (c >= '0' && c <= '9')) return this.number();
    if (c === '[' || c === '(') return this.sequence(c === '[' ? ']' : ')');
    if (c === '{') return this.dict();
    if (/[A-Za-z_]/.test(c)) {
      const word = this.ident(false);
      if (word === 'True') return true;
      if (word === 'False') return false;
      if (word === 'None') return null;
      this.fail(`unknown name ${word} (expected a literal value)`);
    }
    this.fail(c === '' ? 'expected a value but found end of text' : `expected a value but found ${JSON.stringify(c)}`);
  }

  enter(): void {
    if (++this.depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
  }

  sequence(close: string): JsonValue[] {
    this.enter();
    this.pos++;
    const out: JsonValue[] = [];
    this.ws();
    while (this.peek() !== close) {
      out.push(this.value());
      this.ws();
      if (this.peek() === ',') {
        this.pos++;
        this.ws();
      } else if (this.peek() !== close) {
        this.fail(`expected "," or "${close}"`);
      }
    }
    this.pos++;
    this.depth--;
    return out;
  }

  dict(): { [key: string]: JsonValue } {
    this.enter();
    this.pos++;
    const out: { [key: string]: JsonValue } = {};
    this.ws();
    while (this.peek() !== '}') {
      const q = this.peek();
      if (q !== "'" && q !== '"') this.fail('dict keys must be strings');
      const key = this.string();
      this.ws();
      this.expect(':');
      this.ws();
      out[key] = this.value();
      this.ws();
      if (this.peek() === ',') {
        this.pos++;
        this.ws();
      } else if (this.peek() !== '}') {
        this.fail('expected "," or "}"');
      }
    }
    this.pos++;
    this.depth--;
    return out;
  }

  number(): number {
    const m = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(this.s.slice(this.pos, this.pos + 400));
    if (!m) this.fail('malformed number');
    this.pos += m[0].length;
    const v = Number(m[0]);
    if (!Number.isFinite(v)) this.fail(`number out of range: ${m[0]}`);
    return v;
  }

  string(): string {
    const q = this.s[this.pos++];
    let out = '';
    for (;;) {
      // Copy the plain stretch up to the next quote, backslash or newline in one slice: adding one character
      // at a time made a 1 MB string literal take a second.
      const from = this.pos;
      while (this.pos < this.s.length) {
        const c = this.s[this.pos];
        if (c === q || c === '\\' || c === '\n') break;
        this.pos++;
      }
      if (this.pos > from) out += this.s.slice(from, this.pos);
      if (this.pos >= this.s.length) this.fail('unterminated string');
      const ch = this.s[this.pos++];
      if (ch === q) return out;
      if (ch === '\n') this.fail('newline inside a string');
      if (this.pos >= this.s.length) this.fail('unterminated string');
      const e = this.s[this.pos++];
      if (e === 'n') out += '\n';
      else if (e === 't') out += '\t';
      else if (e === 'r') out += '\r';
      else if (e === '0') out += '\0';
      else if (e === 'x' || e === 'u') {
        const len = e === 'x' ? 2 : 4;
        const hex = this.s.slice(this.pos, this.pos + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) this.fail(`bad \\${e} escape`);
        out += String.fromCharCode(parseInt(hex, 16));
        this.pos += len;
      } else if (e === '\\' || e === "'" || e === '"') out += e;
      else out += '\\' + e; // like Python, an unknown escape keeps its backslash
    }
  }
}
