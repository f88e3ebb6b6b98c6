/**
 * One multi-turn episode: the environment side of a rollout (docs/design.md A.2).
 *
 * - A message with call syntax (`parseToolCalls(...).hasCallSyntax`) is an action: its parsed calls run in
 *   order on the episode's family instance, every malformed call becomes an error text, and the observation
 *   (a user message of `<tool_response>` blocks) comes back; the user turn continues.
 * - A message without call syntax is a reply: it ends the current user turn. The next user turn arrives as
 *   the observation (prefixed with the "new functions" block when a miss_func turn re-offers functions, which
 *   become callable only from then on); after the last turn the episode is done.
 * - At most `maxAssistantMessages` (30, as in the paper's script) assistant messages per episode.
 * Nothing the model writes can make `step` throw.
 */
import type { CallSyntax, Message, ToolCall } from '../format/types';
import { renderSystemPrompt, renderToolResponses, renderToolsAdded } from '../format/chat';
import { parseToolCalls } from '../format/toolcall';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '../format/tokens';
import { ApiFamily, cloneJson } from './families/base';
import { createFamily } from './families/index';
import { Task } from './task';
import { CheckResult, TurnRecord, checkTask } from './checker';

export interface EpisodeOptions {
  /** Call syntax of the prompt and the parser. Default: the task's own syntax, else 'json'. */
  syntax?: CallSyntax;
  /** Default 30 (docs/design.md A.2). */
  maxAssistantMessages?: number;
  /** HBG hint appended to the system prompt (docs/design.md A.6). */
  hint?: string;
  /**
   * A message is a call only when it holds a closed `<tool_call> ... </tool_call>` block; anything else (a bare
   * `<tool_call>` too) is a reply that ends the turn: the paper's tool server (lib/train/pipeline.ts, E1). Default
   * false: any tag is a call attempt, answered with an error when it does not parse. JSON syntax only.
   */
  closedCallsOnly?: boolean;
}

/**
 * Whether `s` holds a closed call block, as the paper's tool server looks for one (`<tool_call>(.*?)</tool_call>`
 * across lines): some `<tool_call>` with a `</tool_call>` after it. Two scans, whatever the message.
 */
function hasClosedBlock(s: string): boolean {
  const open = s.indexOf(TOOL_CALL_OPEN);
  return open >= 0 && s.indexOf(TOOL_CALL_CLOSE, open + TOOL_CALL_OPEN.length) >= 0;
}

export interface StepResult {
  /** The next user message (tool responses or the next user turn); null when the episode is done. */
  observation: Message | null;
  done: boolean;
  /** This message was a reply that ended a user turn. */
  endedTurn: boolean;
}

export interface EpisodeResult extends CheckResult {
  reward: number;
}

export class Episode {
  readonly task: Task;
  readonly syntax: CallSyntax;
  readonly maxAssistantMessages: number;
  readonly hint: string | undefined;
  private readonly closedCallsOnly: boolean;
  private readonly env: ApiFamily;
  private readonly available: Set<string>;
  private readonly msgs: Message[] = [];
  private readonly turns: TurnRecord[] = [];
  private turn = 0;
  private nAssistant = 0;
  private finished = false;

  constructor(task: Task, opts: EpisodeOptions = {}) {
    this.task = task;
    // A format-OOD task carries its syntax; it wins over the caller's default so a split is posed as stored.
    this.syntax = task.syntax ?? opts.syntax ?? 'json';
    this.maxAssistantMessages = opts.maxAssistantMessages ?? 30;
    this.hint = opts.hint;
    this.closedCallsOnly = opts.closedCallsOnly ?? false;
    this.env = createFamily(task.family, task.initialState);
    this.available = new Set(task.tools.map((t) => t.name));
    this.msgs.push({ role: 'system', content: renderSystemPrompt(task.tools,
      { syntax: this.syntax, hint: this.hint }) });
    this.msgs.push({ role: 'user', content: task.turns[0].user });
    this.turns.push(this.freshTurn());
  }

  /** System prompt (tools, optional hint) and the first user turn. */
  initialMessages(): Message[] {
    return this.msgs.slice(0, 2).map((m) => ({ ...m }));
  }

  /** The same without the hint: the context an HBG rollout is trained on (the hint exists while sampling only). */
  unhintedMessages(): Message[] {
    if (this.hint === undefined) return this.initialMessages();
    return [{ role: 'system', content: renderSystemPrompt(this.task.tools, { syntax: this.syntax }) },
      { ...this.msgs[1] }];
  }

  get done(): boolean {
    return this.finished;
  }

  /** The whole conversation so far (system, users, assistant messages, observations). */
  get messages(): Message[] {
    return this.msgs.map((m) => ({ ...m }));
  }

  get assistantCount(): number {
    return this.nAssistant;
  }

  /** Index of the user turn in progress (equals turns.length once every turn is answered). */
  get turnIndex(): number {
    return this.turn;
  }

  step(assistantContent: string): StepResult {
    if (this.finished) return { observation: null, done: true, endedTurn: false };
    const content = typeof assistantContent === 'string' ? assistantContent : String(assistantContent ?? '');
    this.msgs.push({ role: 'assistant', content });
    this.nAssistant++;
    const parsed = parseToolCalls(content, this.syntax);
    let observation: Message | null;
    let endedTurn = false;
    if (parsed.hasCallSyntax && !(this.closedCallsOnly && this.syntax === 'json' && !hasClosedBlock(content))) {
      const results = parsed.calls.map((c) => this.execute(c));
      for (const e of parsed.errors) results.push(e.startsWith('Error') ? e : `Error: ${e}`);
      if (results.length === 0) results.push('Error: no valid tool call found');
      this.current().state = this.env.getState();
      observation = { role: 'user', content: renderToolResponses(results) };
    } else {
      endedTurn = true;
      const rec = this.current();
      rec.completed = true;
      rec.state = this.env.getState();
      this.turn++;
      if (this.turn >= this.task.turns.length) {
        this.finished = true;
        return { observation: null, done: true, endedTurn };
      }
      const next = this.task.turns[this.turn];
      let text = next.user;
      if (next.addedTools && next.addedTools.length) {
        for (const t of next.addedTools) this.available.add(t.name);
        text = renderToolsAdded(next.addedTools) + text;
      }
      this.turns.push(this.freshTurn());
      observation = { role: 'user', content: text };
    }
    if (this.nAssistant >= this.maxAssistantMessages) {
      this.finished = true;
      return { observation: null, done: true, endedTurn };
    }
    this.msgs.push(observation);
    return { observation: { ...observation }, done: false, endedTurn };
  }

  /** Per-turn executed calls, results, end state and completion (the checker's input). */
  turnLog(): TurnRecord[] {
    return this.turns.map((t) => ({ calls: cloneJson(t.calls as never), results: t.results.slice(),
      state: cloneJson(t.state), completed: t.completed }));
  }

  /** Checker verdict and binary reward (docs/design.md A.3); valid at any time, final once done. */
  result(): EpisodeResult {
    const r = checkTask(this.task, this.turns);
    return { ...r, reward: r.pass ? 1 : 0 };
  }

  private execute(c: ToolCall): string {
    const rec = this.current();
    let result: string;
    if (this.isFamilyFunction(c.name) && !this.available.has(c.name as string)) {
      // A withheld miss_func function exists in the simulator but has not been offered (yet).
      result = `Error: function ${c.name} is not available`;
    } else {
      result = this.env.call(c.name, c.arguments).result;
    }
    rec.calls.push(c);
    rec.results.push(result);
    return result;
  }

  private isFamilyFunction(name: unknown): boolean {
    return typeof name === 'string' && this.env.tools.some((t) => t.name === name);
  }

  private current(): TurnRecord {
    return this.turns[this.turns.length - 1];
  }

  private freshTurn(): TurnRecord {
    return { calls: [], results: [], state: this.env.getState(), completed: false };
  }
}
