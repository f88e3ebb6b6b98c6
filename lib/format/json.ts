/**
 * A compact JSON serializer with `", "` and `": "` spacing, the way Qwen's chat template (and Python's
 * json.dumps) writes tool calls: `{"name": "cd", "arguments": {"folder": "doc"}}`.
 *
 * Why not JSON.stringify? Its compact form has no spaces (`{"a":1,"b":2}`) and its pretty form has newlines.
 * The spaced compact form is what the study's models read and write, and our tokenizer has one-token pieces for
 * exactly these separators (`": "`, `", "`), which keeps a call about a dozen tokens long.
 * Keys keep their insertion order, so rendering is stable.
 */
import { JsonValue } from './types';

export function toJsonText(v: JsonValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isFinite(v) ? JSON.stringify(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return '[' + v.map(toJsonText).join(', ') + ']';
  const parts: string[] = [];
  for (const k of Object.keys(v)) {
    const x = v[k];
    if (x === undefined) continue;
    parts.push(JSON.stringify(k) + ': ' + toJsonText(x));
  }
  return '{' + parts.join(', ') + '}';
}

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(v: unknown): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
