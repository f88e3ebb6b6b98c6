/**
 * Reminders: the held-out family for content-OOD (docs/design.md A.7, after ACEBench's reminder agent tasks).
 * Training never sees these functions; their names and values are built from words the corpus uses, so the
 * tokenizer spells them without `<unk>`.
 *
 * State: `{reminders: {id, title, time, done}[], next_id}`; a time is `HH:MM`.
 */
import type { JsonValue } from '../../format/types';
import { Rng } from '../../prng';
import { ApiError, ApiFamily, Args, tool } from './base';
import { REMINDER_TITLES, TIMES } from '../pools';

export type Reminder = { id: number; title: string; time: string; done: boolean };
export type RemState = { reminders: Reminder[]; next_id: number };

export const REM_TOOLS = [
  tool('add_reminder', 'create a new reminder', ['title', 'string'], ['time', 'string']),
  tool('view_reminders', 'list all reminders'),
  tool('delete_reminder', 'delete a reminder', ['reminder_id', 'integer']),
  tool('complete_reminder', 'mark a reminder as done', ['reminder_id', 'integer']),
  tool('set_reminder_time', 'change the time of a reminder', ['reminder_id', 'integer'], ['time', 'string']),
];

const TIME_RE = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

export class Reminders extends ApiFamily<RemState> {
  readonly name = 'reminders';
  readonly tools = REM_TOOLS;

  private find(id: number): Reminder {
    const r = this.state.reminders.find((x) => x.id === id);
    if (!r) throw new ApiError(`no reminder with id ${id}`);
    return r;
  }

  protected handle(name: string, a: Args): JsonValue {
    const s = this.state;
    switch (name) {
      case 'add_reminder': {
        const title = a.title as string;
        const time = a.time as string;
        if (title.trim() === '') throw new ApiError('title is empty');
        if (!TIME_RE.test(time)) throw new ApiError('time must look like 09:30');
        const id = s.next_id++;
        s.reminders.push({ id, title, time, done: false });
        return { reminder_id: id };
      }
      case 'view_reminders':
        return { reminders: s.reminders.map((r) => ({ id: r.id, title: r.title, time: r.time, done: r.done })) };
      case 'delete_reminder': {
        const r = this.find(a.reminder_id as number);
        s.reminders.splice(s.reminders.indexOf(r), 1);
        return { deleted: r.id };
      }
      case 'complete_reminder': {
        const r = this.find(a.reminder_id as number);
        if (r.done) throw new ApiError(`reminder ${r.id} is already done`);
        r.done = true;
        return { reminder_id: r.id, done: true };
      }
      case 'set_reminder_time': {
        const r = this.find(a.reminder_id as number);
        const time = a.time as string;
        if (!TIME_RE.test(time)) throw new ApiError('time must look like 09:30');
        r.time = time;
        return { reminder_id: r.id, time };
      }
    }
    throw new ApiError(`unknown function ${name}`);
  }

  static randomState(rng: Rng, opts: { long?: boolean } = {}): RemState {
    const reminders: Reminder[] = [];
    let id = rng.int(1, 30);
    const titles = rng.sample(REMINDER_TITLES, opts.long ? REMINDER_TITLES.length : rng.int(1, 4));
    for (const title of titles) reminders.push({ id: id++, title, time: rng.pick(TIMES), done: rng.chance(0.2) });
    return { reminders, next_id: id + rng.int(1, 10) };
  }
}
