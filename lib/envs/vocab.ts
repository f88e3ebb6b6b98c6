/**
 * The texts the closed vocabulary is built from (docs/design.md B "Tokens"): everything the model can read or write
 * in any split. Besides conversations, the environment's own error texts must be spelled without `<unk>`,
 * because a policy that calls badly reads them during RL.
 */
import type { JsonValue } from '../format/types';
import { parseToolCalls } from '../format/toolcall';
import { Rng } from '../prng';
import { FAMILIES, createFamily } from './families/index';

/** Error texts of every family and of the parsers, from a fixed set of bad calls. */
export function errorProbeTexts(): string[] {
  const out = new Set<string>();
  const bad: JsonValue[] = ['x', 0, -1, 99999, true, [], 'zz_zz'];
  for (const name of Object.keys(FAMILIES)) {
    const fam = FAMILIES[name];
    const env = createFamily(name, fam.randomState(new Rng(1), {}));
    out.add(env.call('no_such_function', {}).result);
    out.add(env.call(fam.tools[0].name, 'not an object' as never).result);
    for (const t of fam.tools) {
      out.add(env.call(t.name, { extra: 1 }).result);
      out.add(env.call(t.name, {}).result);
      for (const v of bad) {
        const args: { [k: string]: JsonValue } = {};
        for (const p of t.params) args[p.name] = v;
        out.add(createFamily(name, env.getState()).call(t.name, args).result);
      }
    }
  }
  // Calls with values taken from the state itself, each run twice on one instance, reach the stateful errors
  // ("x already exists", "already at the top folder", "not enough shares"...).
  for (const name of Object.keys(FAMILIES)) {
    const fam = FAMILIES[name];
    const state = fam.randomState(new Rng(2), {});
    const strings = Array.from(new Set(collectStrings(state).concat(['..', '/']))).slice(0, 40);
    for (const t of fam.tools) {
      for (const v of strings) {
        const env = createFamily(name, state);
        const args: { [k: string]: JsonValue } = {};
        for (const p of t.params) args[p.name] = p.type === 'string' ? v : p.type === 'boolean' ?
          true : p.type === 'array' ? [v] : 1;
        out.add(env.call(t.name, args).result);
        out.add(env.call(t.name, args).result);
      }
    }
  }
  out.add('Error: function send_message is not available');
  out.add('Error: no valid tool call found');
  const broken = ['<tool_call>', '<tool_call>{"name": 1}</tool_call>', '<tool_call>{"name": "cd"}</tool_call>',
    '<tool_call>{bad</tool_call>', '</tool_call>', '<tool_call><tool_call>'];
  for (const b of broken) parseToolCalls(b, 'json').errors.forEach((e) => out.add(e));
  for (const b of ['[cd(', '[cd(folder=)]', '[cd(folder="a"', '[1(a=2)]', '[cd(x)]']) parseToolCalls(b,
    'python').errors.forEach((e) => out.add(e));
  return Array.from(out);
}

/** Every string (keys and values) inside a JSON value. */
function collectStrings(v: JsonValue): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(collectStrings);
  if (v !== null && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => [k, ...collectStrings(x)]);
  return [];
}
