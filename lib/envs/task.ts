/**
 * The task record: a BFCL-V3-style multi-turn task (docs/design.md A.1) reduced to one API family.
 *
 * A task is plain JSON, so splits are committed as JSONL under data/tasks and reloaded without code.
 */
import type { CallSyntax, JsonValue, ToolCall, ToolSpec } from '../format/types';

export type Category = 'base' | 'miss_param' | 'miss_func' | 'long_context';

export const CATEGORIES: readonly Category[] = ['base', 'miss_param', 'miss_func', 'long_context'];
/** The categories RL and SFT train on; long_context is evaluation only (docs/design.md A.1). */
export const TRAIN_CATEGORIES: readonly Category[] = ['base', 'miss_param', 'miss_func'];

export interface TaskTurn {
  /** The user's request for this turn (without the "new functions" preamble; the episode adds that). */
  user: string;
  /** Ground-truth calls; empty for a miss_param / miss_func turn, where the right move is to ask / refuse. */
  gt: ToolCall[];
  /** Functions re-offered at this turn (miss_func); callable from this turn on. */
  addedTools?: ToolSpec[];
}

export interface Task {
  id: string;
  category: Category;
  family: string;
  initialState: JsonValue;
  /** Functions offered in the system prompt at the start (a miss_func task lacks the withheld one). */
  tools: ToolSpec[];
  turns: TaskTurn[];
  /** Call syntax the task is posed in; absent means 'json'. Format-OOD tasks carry 'python' (docs/design.md A.7). */
  syntax?: CallSyntax;
}

/** The fixed refusal for a miss_func turn (docs/design.md A.6). */
export const REFUSAL_FUNC = 'The required function is not available.';
/** The fixed refusal for a miss_param turn (docs/design.md A.6). */
export const REFUSAL_PARAM = 'The required parameters are missing.';
/**
 * The short reply that closes a turn whose calls are done (docs/design.md A.6: teachers close each turn with a short
 * reply).
 */
export const TURN_DONE = 'Done.';
