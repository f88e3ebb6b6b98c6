/**
 * The general tool-use corpus: our stand-in for ToolACE (docs/design.md A.6 "ACE-SFT", B "Base checkpoint").
 *
 * Conversations in the chat format of A.2, mostly single-turn: a system prompt with 3-6 tools, a request, one
 * or two tool-call messages with plausible JSON results, and a short reply. Some requests need no tool (plain
 * reply), some lack a required value (the reply asks for it, in words unlike the task refusals), a minority are
 * multi-turn, and a share use the training world's functions with phrasings the task generator never uses.
 * The aim is partial, not full, skill on the world after SFT (5-40% accuracy).
 */
import type { CallSyntax, JsonValue, Message, ToolCall, ToolSpec } from '../format/types';
import { renderSystemPrompt, renderToolResponses } from '../format/chat';
import { renderToolCalls } from '../format/toolcall';
import { Rng } from '../prng';
import { toText } from './families/base';
import { FAMILIES, TRAIN_FAMILIES, createFamily } from './families/index';
import { SYNTH_FUNCTIONS, SynthFunction } from './corpus_apis';
import { WORLD_REQUESTS } from './corpus_world';
import { lowerFirst, say } from './intents/common';
import { TOOL_CALL_OPEN } from '../format/tokens';

export interface CorpusConfig {
  /** Number of conversations. Default 3000. */
  n: number;
  /** Share of two-turn conversations among synthetic tool conversations. Default 0.3. */
  multiTurnShare: number;
  /**
   * Share of conversations using the training world's functions (other phrasings). Default 0.45: at 0.2 the
   * base model reached 4% greedy ID accuracy and no reward at all when sampled at temperature 1, so GRPO had
   * no signal (docs/design.md B asks for a non-zero success rate).
   */
  worldFunctionShare: number;
  /** Share of requests no tool can serve (plain reply). Default 0.1. */
  noToolShare: number;
  /** Share of requests missing a required value (the reply asks for it). Default 0.1. */
  askShare: number;
  /**
   * Share of conversations posed in the python-list syntax, the world-function ones included. Default 0.3: a
   * pretrained instruct model has seen python calls, so format-OOD (docs/design.md A.7) tests a known but
   * untrained format, not unseen tokens. (With python only in 10% of the synthetic conversations, the base
   * opened python calls on format-OOD and closed them as JSON: `[mkdir(folder='recipes"}}`.)
   */
  pythonShare: number;
  /**
   * Share of synthetic conversations whose functions are renamed (the verb of every name swapped for a
   * synonym: `get_weather` -> `fetch_weather`, `list_events` -> `view_events`). Default 0.5. ToolACE holds
   * thousands of APIs; with 30 fixed names a small model memorises request -> name and never reads the
   * `<tools>` block, which is what an unseen family (content-OOD) needs: the first base called the corpus's
   * complete_task for "mark reminder 10 as done" although the tools offered complete_reminder.
   */
  renameShare: number;
  seed: number;
}

export const defaultCorpusConfig: CorpusConfig = {
  n: 3000,
  multiTurnShare: 0.3,
  worldFunctionShare: 0.45,
  noToolShare: 0.1,
  askShare: 0.1,
  pythonShare: 0.3,
  renameShare: 0.5,
  seed: 7,
};

export type CorpusKind = 'tool' | 'multi' | 'world' | 'no_tool' | 'ask';

export interface CorpusConversation {
  id: string;
  kind: CorpusKind;
  syntax: CallSyntax;
  messages: Message[];
}

const REPLIES = ['All set.', 'Here you go.', 'Finished.', 'That is done.', 'Here is the result.', 'It is ready.',
  'Done.'];
const NO_TOOL_ASKS = ['tell me a joke.', 'write a poem about the sea.', 'can you paint my house?',
  'fix my bike, please.', 'what is the meaning of life?', 'sing me a song.', 'how are you today?',
  'clean my room for me.'];
const NO_TOOL_REPLIES = ['Sorry, I cannot do that with the available functions.',
  'None of my functions can help with that.', 'I am not able to do that here.', 'Sorry, I cannot help with that.'];
const ASK_TEMPLATES = ['can you {desc} for me?', 'I want to {desc}.', 'please {desc}.'];

function toolList(rng: Rng, needed: ToolSpec[], others: ToolSpec[]): ToolSpec[] {
  const names = new Set(needed.map((t) => t.name));
  const pool = others.filter((t) => !names.has(t.name));
  const k = Math.max(0, Math.min(pool.length, rng.int(3, 6) - needed.length));
  return rng.shuffle(needed.concat(rng.sample(pool, k)));
}

function synthCall(rng: Rng, f: SynthFunction): { text: string; call: ToolCall; result: string } {
  const args: { [k: string]: JsonValue } = {};
  for (const p of f.params) args[p.name] = p.gen(rng);
  const vars: { [k: string]: string | number } = {};
  for (const k of Object.keys(args)) vars[k] = args[k] as string | number;
  return { text: say(rng, f.asks, vars), call: { name: f.spec.name, arguments: args },
    result: toText(f.result(args, rng)) };
}

/** Assistant call messages + observations + a closing reply for one user request. */
function callTurn(msgs: Message[], rng: Rng, calls: ToolCall[], results: string[], syntax: CallSyntax): void {
  // ToolACE-style: usually all calls in one message, sometimes one message per call.
  if (calls.length > 1 && rng.chance(0.5)) {
    msgs.push({ role: 'assistant', content: renderToolCalls(calls, syntax) });
    msgs.push({ role: 'user', content: renderToolResponses(results) });
  } else {
    calls.forEach((c, i) => {
      msgs.push({ role: 'assistant', content: renderToolCalls([c], syntax) });
      msgs.push({ role: 'user', content: renderToolResponses([results[i]]) });
    });
  }
  msgs.push({ role: 'assistant', content: rng.pick(REPLIES) });
}

const SYNTH_SPECS = SYNTH_FUNCTIONS.map((f) => f.spec);

/** Synonyms of the verbs that start the synthetic function names (corpus renaming, CorpusConfig.renameShare). */
const VERB_SYNONYMS: Record<string, string[]> = {
  get: ['fetch', 'check', 'show'], set: ['change', 'update'], book: ['reserve'], order: ['request'], play: ['start'],
  translate: ['convert'], convert: ['exchange'], search: ['find', 'query'], create: ['add', 'new'],
    list: ['view', 'show'],
  complete: ['finish', 'close'], snooze: ['delay'], mute: ['silence'], post: ['share', 'publish'],
    find: ['search', 'locate'],
  calculate: ['compute'], send: ['write'], check: ['verify', 'get'], rent: ['hire'], add: ['sum'], reminder: ['alert'],
};

/** A renamed copy of a function (verb swapped for a synonym), or the function itself when its verb has none. */
function renamed(rng: Rng, f: SynthFunction): SynthFunction {
  const [verb, ...rest] = f.spec.name.split('_');
  const syn = VERB_SYNONYMS[verb];
  if (!syn || rest.length === 0) return f;
  return { ...f, spec: { ...f.spec, name: [rng.pick(syn), ...rest].join('_') } };
}

function synthConversation(rng: Rng, kind: CorpusKind, syntax: CallSyntax, rename: boolean): Message[] | null {
  const pool = rename ? SYNTH_FUNCTIONS.map((f) => renamed(rng, f)) : SYNTH_FUNCTIONS;
  const fns = rng.sample(pool, kind === 'multi' ? 2 : rng.chance(0.25) ? 2 : 1);
  // Python conversations often use a boolean argument, so the python literals True / False are seen words.
  const boolFn = pool.find((f) => f.params.some((p) => p.type === 'boolean'));
  if (syntax === 'python' && boolFn && !fns.includes(boolFn) && rng.chance(0.2)) fns[0] = boolFn;
  const tools = toolList(rng, fns.map((f) => f.spec), pool.map((f) => f.spec));
  const msgs: Message[] = [{ role: 'system', content: renderSystemPrompt(tools, { syntax }) }];
  if (kind === 'no_tool') {
    msgs.push({ role: 'user', content: say(rng, NO_TOOL_ASKS) });
    msgs.push({ role: 'assistant', content: rng.pick(NO_TOOL_REPLIES) });
    return msgs;
  }
  if (kind === 'ask') {
    const f = fns[0];
    if (!f.params.length) return null;
    msgs.push({ role: 'user', content: say(rng, ASK_TEMPLATES, { desc: f.spec.description }) });
    const names = f.params.map((p) => p.name.replace(/_/g, ' '));
    const list = names.length === 1 ? names[0] : names.slice(0, -1).join(', ') + ' and ' + names[names.length - 1];
    msgs.push({ role: 'assistant', content: `Please tell me the ${list}.` });
    return msgs;
  }
  const a = fns.map((f) => synthCall(rng, f));
  if (kind === 'multi') {
    for (const x of a) {
      msgs.push({ role: 'user', content: x.text });
      callTurn(msgs, rng, [x.call], [x.result], syntax);
    }
    return msgs;
  }
  msgs.push({ role: 'user', content: a.length === 1 ? a[0].text : a[0].text + ' ' + say(rng, ['also, ', 'and ']) +
    lowerFirst(a[1].text) });
  callTurn(msgs, rng, a.map((x) => x.call), a.map((x) => x.result), syntax);
  return msgs;
}

function worldConversation(rng: Rng, syntax: CallSyntax): Message[] | null {
  const family = rng.pick(TRAIN_FAMILIES);
  const state = FAMILIES[family].randomState(rng, {});
  const req = rng.pick(WORLD_REQUESTS[family])(state as never, rng);
  if (!req) return null;
  const env = createFamily(family, state);
  const results: string[] = [];
  for (const c of req.calls) {
    const r = env.call(c.name, c.arguments);
    if (!r.ok) return null;
    results.push(r.result);
  }
  const famTools = FAMILIES[family].tools.slice();
  const needed = famTools.filter((t) => req.calls.some((c) => c.name === t.name));
  // World tools mixed with a few synthetic ones: the prompt is not a copy of a task prompt.
  const tools = toolList(rng, needed, famTools.concat(rng.sample(SYNTH_SPECS, 2)));
  const msgs: Message[] = [{ role: 'system', content: renderSystemPrompt(tools, { syntax }) }];
  msgs.push({ role: 'user', content: req.text });
  callTurn(msgs, rng, req.calls, results, syntax);
  return msgs;
}

/** The corpus, a pure function of the config. */
export function generateCorpus(cfg: Partial<CorpusConfig> = {}): CorpusConversation[] {
  const c: CorpusConfig = { ...defaultCorpusConfig, ...cfg };
  const rng = new Rng(c.seed);
  const out: CorpusConversation[] = [];
  let guard = 0;
  while (out.length < c.n) {
    if (++guard > c.n * 50) throw new Error('generateCorpus: too many rejected conversations');
    const r = rng.fork();
    const u = r.next();
    let kind: CorpusKind;
    if (u < c.worldFunctionShare) kind = 'world';
    else if (u < c.worldFunctionShare + c.noToolShare) kind = 'no_tool';
    else if (u < c.worldFunctionShare + c.noToolShare + c.askShare) kind = 'ask';
    else kind = r.chance(c.multiTurnShare) ? 'multi' : 'tool';
    const syntax: CallSyntax = r.chance(c.pythonShare) ? 'python' : 'json';
    const msgs = kind === 'world' ? worldConversation(r, syntax) : synthConversation(r, kind, syntax,
      r.chance(c.renameShare));
    if (!msgs) continue;
    out.push({ id: `corpus-${String(out.length).padStart(4, '0')}`, kind, syntax, messages: msgs });
  }
  return out;
}

/**
 * The corpus as a general instruct model may have seen it, with a share of empty calls: in `share` of the JSON-syntax
 * conversations that make a call, one tool-call message (drawn at random) becomes a bare `<tool_call>\n` and the
 * conversation ends there, so the model learns that a message can end right after the tag. The base variant of the
 * pipeline study trains on it (docs/design.md E.3: the paper's collapse may follow the base's runner-up after
 * `<tool_call>\n`, which in the lab's instruct base is `</tool_call>`). Deterministic for a seed; the rest unchanged.
 */
export function withEmptyCalls(convs: Message[][], share: number, seed: number): Message[][] {
  const rng = new Rng(seed);
  return convs.map((c) => {
    const calls = c.map((m, i) => (m.role === 'assistant' && m.content.startsWith(TOOL_CALL_OPEN + '\n') ? i : -1))
      .filter((i) => i >= 0);
    if (calls.length === 0 || !rng.chance(share)) return c;
    const at = calls[rng.int(0, calls.length - 1)];
    return [...c.slice(0, at), { role: 'assistant', content: TOOL_CALL_OPEN + '\n' }];
  });
}
