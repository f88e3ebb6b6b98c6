/**
 * The seeded task generator (docs/design.md A.1, B): BFCL-V3-like multi-turn tasks in four categories.
 *
 * - base: 1-3 user turns, 1-4 GT calls per turn (a turn may chain two requests).
 * - miss_param: one turn leaves out a required value (GT empty: the right move is to ask); the next turn
 *   supplies it and its GT holds the calls.
 * - miss_func: a needed function is withheld from `tools`; its turn has empty GT (the right move is to say it
 *   is not available); the next turn re-offers it (`addedTools`) and its GT uses it.
 * - long_context: like base, on a large state whose first request returns a long observation (eval only).
 *
 * Every draft is executed on a simulator and kept only if all of its calls succeed, so GT calls replay.
 */
import type { JsonValue, ToolCall, ToolSpec } from '../format/types';
import { Rng, hashString } from '../prng';
import { ApiFamily, canonicalJson, cloneJson } from './families/base';
import { FAMILIES, TRAIN_FAMILIES, createFamily } from './families/index';
import { INTENTS, Intent, IntentDraft, lowerFirst, say } from './intents/index';
import { Category, Task, TaskTurn } from './task';
import { teacherTrajectory } from './teacher';
import { renderConversation } from '../format/chat';
import { pretokenize } from '../format/tokenizer';

export interface GenerateOptions {
  /** Families to draw from, round-robin. Default: the training families (long_context: those with long intents). */
  families?: readonly string[];
  /** Prefix of task ids: `${idPrefix}-${category}-${index}`. Default 'task'. */
  idPrefix?: string;
  /** Content keys (see taskContentKey) to avoid, e.g. the training tasks when generating the test split. */
  avoid?: ReadonlySet<string>;
  /** Probability that a base turn chains a second request. Default 0.25. */
  chainProb?: number;
  /**
   * Longest teacher conversation kept, in tokens (pre-tokenizer pieces = token ids of any vocabulary built
   * from the data). Default 512, long_context 1000: a trajectory must fit the tiny model's context (docs/design.md B).
   */
  maxTokens?: number;
}

/** Tokens of a task's teacher conversation (json syntax unless the task says otherwise). */
export function teacherTokenCount(task: Task): number {
  return pretokenize(renderConversation(teacherTrajectory(task))).length;
}

/** Re-offer sentences for the turn after a miss_func refusal. */
const REOFFER = ['please do that now.', 'try my request again now.', 'go ahead with my request.', 'you can do it now.'];
const CHAIN = ['then ', 'after that, ', 'also, '];

/** What makes two tasks "the same": family, initial state, tools and turns (not the id). */
export function taskContentKey(t: Task): string {
  return canonicalJson({ f: t.family, s: t.initialState, tools: t.tools.map((x) => x.name),
    turns: t.turns as unknown as JsonValue });
}

/** Families whose intents include a long observation (long_context needs one). */
export function longFamilies(fams: readonly string[]): string[] {
  return fams.filter((f) => (INTENTS[f] ?? []).some((i) => i.long));
}

class Builder {
  sim: ApiFamily;
  memo: { [k: string]: JsonValue };
  constructor(readonly family: string, readonly rng: Rng, readonly initial: JsonValue, readonly long: boolean) {
    this.sim = createFamily(family, initial);
    this.memo = { initial: cloneJson(initial) };
  }

  /** One draft from a random applicable intent (filtered by `accept`), not yet executed. */
  draft(accept: (i: Intent<never>, d: IntentDraft) => boolean, pool?: Intent<never>[]): IntentDraft | null {
    const intents = pool ?? INTENTS[this.family];
    for (let attempt = 0; attempt < 30; attempt++) {
      const intent = this.rng.pick(intents);
      const d = intent.make({ rng: this.rng, state: this.sim.getState() as never, long: this.long, memo: this.memo });
      if (d && accept(intent, d) && this.replays(d.calls)) return d;
    }
    return null;
  }

  /** True when all calls succeed on a copy of the simulator. */
  replays(calls: ToolCall[]): boolean {
    const probe = createFamily(this.family, this.sim.getState());
    return calls.every((c) => probe.call(c.name, c.arguments).ok);
  }

  exec(calls: ToolCall[]): void {
    for (const c of calls) {
      const r = this.sim.call(c.name, c.arguments);
      if (!r.ok) throw new Error(`generator: GT call ${c.name} failed: ${r.result}`);
    }
  }

  /** A base turn: one request, sometimes chained with a second (total <= 4 calls). */
  baseTurn(accept: (i: Intent<never>, d: IntentDraft) => boolean, chainProb: number,
    first?: Intent<never>[]): TaskTurn | null {
    const a = this.draft(accept, first);
    if (!a) return null;
    this.exec(a.calls);
    let text = a.text;
    let gt = a.calls.slice();
    if (this.rng.chance(chainProb) && gt.length <= 2) {
      const b = this.draft((i, d) => accept(i, d) && d.calls.length + gt.length <= 4);
      if (b) {
        this.exec(b.calls);
        text += ' ' + say(this.rng, CHAIN) + lowerFirst(b.text);
        gt = gt.concat(b.calls);
      }
    }
    return { user: text, gt };
  }
}

function specOf(family: string, name: string): ToolSpec {
  return cloneJson(FAMILIES[family].tools.find((t) => t.name === name)! as unknown as JsonValue) as unknown as ToolSpec;
}

function allTools(family: string): ToolSpec[] {
  return FAMILIES[family].tools.map((t) => specOf(family, t.name));
}

/** One task or null (the generator retries with fresh randomness). */
function generateOne(category: Category, family: string, rng: Rng, chainProb: number): Omit<Task, 'id'> | null {
  const long = category === 'long_context';
  const initial = FAMILIES[family].randomState(rng, { long });
  const b = new Builder(family, rng, initial, long);
  const any = () => true;
  const turns: TaskTurn[] = [];
  let tools = allTools(family);

  if (category === 'base' || category === 'long_context') {
    const n = 1 + rng.categorical([0.4, 0.4, 0.2]);
    for (let t = 0; t < n; t++) {
      const firstPool = long && t === 0 ? INTENTS[family].filter((i) => i.long) : undefined;
      const turn = b.baseTurn(any, chainProb, firstPool);
      if (!turn) return null;
      turns.push(turn);
    }
  } else {
    const pre = rng.chance(0.4);
    const used = new Set<string>();
    if (pre) {
      const turn = b.baseTurn(any, chainProb);
      if (!turn) return null;
      turn.gt.forEach((c) => used.add(c.name));
      turns.push(turn);
    }
    if (category === 'miss_param') {
      const d = b.draft((_i, x) => x.miss !== undefined);
      if (!d || !d.miss) return null;
      turns.push({ user: d.miss.text, gt: [] });
      b.exec(d.calls);
      turns.push({ user: d.miss.supply, gt: d.calls });
    } else {
      const d = b.draft((_i, x) => x.calls.some((c) => !used.has(c.name)));
      if (!d) return null;
      const candidates = Array.from(new Set(d.calls.map((c) => c.name).filter((n) => !used.has(n))));
      const withheld = rng.pick(candidates);
      tools = tools.filter((t) => t.name !== withheld);
      turns.push({ user: d.text, gt: [] });
      b.exec(d.calls);
      turns.push({ user: say(rng, REOFFER), gt: d.calls, addedTools: [specOf(family, withheld)] });
    }
    if (!pre && rng.chance(0.3)) {
      const turn = b.baseTurn(any, chainProb);
      if (turn) turns.push(turn);
    }
  }
  return { category, family, initialState: initial, tools, turns };
}

/**
 * `n` tasks of `category`, a pure function of (category, n, seed, opts). Families are used round-robin so the
 * split is balanced; duplicates (same content key) and anything in `opts.avoid` are skipped.
 */
export function generateTasks(category: Category, n: number, seed: number, opts: GenerateOptions = {}): Task[] {
  const fams = opts.families ?? (category === 'long_context' ? longFamilies(TRAIN_FAMILIES) : TRAIN_FAMILIES);
  if (!fams.length) throw new Error(`generateTasks: no families for category ${category}`);
  for (const f of fams) if (!FAMILIES[f]) throw new Error(`generateTasks: unknown family ${f}`);
  const prefix = opts.idPrefix ?? 'task';
  const maxTokens = opts.maxTokens ?? (category === 'long_context' ? 1000 : 512);
  const master = new Rng(seed ^ hashString(category));
  const seen = new Set<string>(opts.avoid ?? []);
  const out: Task[] = [];
  let guard = 0;
  while (out.length < n) {
    if (++guard > n * 200) throw new Error(`generateTasks: could not generate ${n} distinct ${category} tasks`);
    const family = fams[out.length % fams.length];
    const t = generateOne(category, family, master.fork(), opts.chainProb ?? 0.25);
    if (!t) continue;
    const task: Task = { id: `${prefix}-${category}-${String(out.length).padStart(3, '0')}`, ...t };
    if (teacherTokenCount(task) > maxTokens) continue;
    const key = taskContentKey(task);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(task);
  }
  return out;
}
