/** Requests for the held-out reminders family (content-OOD; lib/envs/families/reminders.ts). */
import { RemState } from '../families/reminders';
import { REMINDER_TITLES, TIMES } from '../pools';
import { Intent, call, say } from './common';

export const REM_INTENTS: Intent<RemState>[] = [
  {
    name: 'add',
    make(c) {
      const t = c.rng.pick(REMINDER_TITLES);
      const time = c.rng.pick(TIMES);
      return {
        calls: [call('add_reminder', { title: t, time })],
        text: say(c.rng, ['remind me to {t} at {time}.', 'add a reminder "{t}" at {time}.',
          'at {time}, remind me to {t}.'], { t, time }),
        miss: { text: say(c.rng, ['remind me to {t}.', 'add a reminder "{t}".'], { t }),
          supply: say(c.rng, ['at {time}.', 'the time is {time}.'], { time }) },
      };
    },
  },
  {
    name: 'view',
    long: true,
    make(c) {
      return { calls: [call('view_reminders')], text: say(c.rng, ['show my reminders.', 'what reminders do I have?']) };
    },
  },
  {
    name: 'delete_title',
    make(c) {
      if (!c.state.reminders.length) return null;
      const r = c.rng.pick(c.state.reminders);
      if (c.state.reminders.filter((x) => x.title === r.title).length > 1) return null;
      return {
        calls: [call('view_reminders'), call('delete_reminder', { reminder_id: r.id })],
        text: say(c.rng, ['delete the reminder to {t}.', 'remove my "{t}" reminder.'], { t: r.title }),
      };
    },
  },
  {
    name: 'complete',
    make(c) {
      const open = c.state.reminders.filter((r) => !r.done);
      if (!open.length) return null;
      const r = c.rng.pick(open);
      if (c.state.reminders.filter((x) => x.title === r.title).length > 1) return null;
      return {
        calls: [call('view_reminders'), call('complete_reminder', { reminder_id: r.id })],
        text: say(c.rng, ['mark "{t}" as done.', 'I did {t}, mark that reminder done.'], { t: r.title }),
      };
    },
  },
  {
    name: 'complete_id',
    make(c) {
      const open = c.state.reminders.filter((r) => !r.done);
      if (!open.length) return null;
      const id = c.rng.pick(open).id;
      return {
        calls: [call('complete_reminder', { reminder_id: id })],
        text: say(c.rng, ['mark reminder {id} as done.', 'reminder {id} is done.'], { id }),
        miss: { text: say(c.rng, ['mark a reminder as done.', 'one of my reminders is done.']),
          supply: say(c.rng, ['it is reminder {id}.', 'the id is {id}.'], { id }) },
      };
    },
  },
  {
    name: 'retime',
    make(c) {
      if (!c.state.reminders.length) return null;
      const r = c.rng.pick(c.state.reminders);
      if (c.state.reminders.filter((x) => x.title === r.title).length > 1) return null;
      const time = c.rng.pick(TIMES.filter((x) => x !== r.time));
      return {
        calls: [call('view_reminders'), call('set_reminder_time', { reminder_id: r.id, time })],
        text: say(c.rng, ['move "{t}" to {time}.', 'change the time of "{t}" to {time}.'], { t: r.title, time }),
        miss: { text: say(c.rng, ['change the time of "{t}".', 'move my "{t}" reminder.'], { t: r.title }),
          supply: say(c.rng, ['make it {time}.', 'the new time is {time}.'], { time }) },
      };
    },
  },
];
