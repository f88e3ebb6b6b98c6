/** Requests for the messaging family (lib/envs/families/messaging.ts). */
import { MsgState } from '../families/messaging';
import { CONTACTS, MESSAGE_TEXTS } from '../pools';
import { Intent, call, say } from './common';

const SEND = ['send {r} a message saying "{t}".', 'text {r}: "{t}".', 'tell {r} "{t}".',
  'please message {r} with "{t}".'];

export const MSG_INTENTS: Intent<MsgState>[] = [
  {
    name: 'send',
    make(c) {
      const r = c.rng.pick(c.state.contacts);
      const t = c.rng.pick(MESSAGE_TEXTS);
      const missText = c.rng.chance(0.5);
      return {
        calls: [call('send_message', { receiver: r, text: t })],
        text: say(c.rng, SEND, { r, t }),
        miss: missText
          ? { text: say(c.rng, ['send a message to {r}.', 'write to {r} for me.'], { r }),
            supply: say(c.rng, ['say "{t}".', 'the text is "{t}".'], { t }) }
          : { text: say(c.rng, ['send the message "{t}".', 'send "{t}" to one of my contacts.'], { t }),
            supply: say(c.rng, ['send it to {r}.', 'it is for {r}.'], { r }) },
      };
    },
  },
  {
    name: 'add_send',
    make(c) {
      const free = CONTACTS.filter((n) => !c.state.contacts.includes(n));
      if (!free.length) return null;
      const n = c.rng.pick(free);
      const t = c.rng.pick(MESSAGE_TEXTS);
      return {
        calls: [call('add_contact', { name: n }), call('send_message', { receiver: n, text: t })],
        text: say(c.rng, ['add {n} as a contact and send them "{t}".',
          'save {n} to my contacts, then text them "{t}".'], { n, t }),
      };
    },
  },
  {
    name: 'add',
    make(c) {
      const free = CONTACTS.filter((n) => !c.state.contacts.includes(n));
      if (!free.length) return null;
      const n = c.rng.pick(free);
      return {
        calls: [call('add_contact', { name: n })],
        text: say(c.rng, ['add {n} to my contacts.', 'save {n} as a new contact.'], { n }),
        miss: { text: say(c.rng, ['add a new contact.', 'save a new person to my contacts.']),
          supply: say(c.rng, ['the name is {n}.', 'it is {n}.'], { n }) },
      };
    },
  },
  {
    name: 'inbox',
    long: true,
    make(c) {
      return { calls: [call('view_inbox')], text: say(c.rng,
        ['show me my inbox.', 'what messages did I get?', 'check my messages.']) };
    },
  },
  {
    name: 'delete_from',
    long: true,
    make(c) {
      if (!c.state.inbox.length) return null;
      const s = c.rng.pick(c.state.inbox).sender;
      const mine = c.state.inbox.filter((m) => m.sender === s);
      const first = mine.length > 1;
      return {
        calls: [call('view_inbox'), call('delete_message', { message_id: mine[0].id })],
        text: say(c.rng, first ? ['delete the first message from {s}.',
          'remove the first message {s} sent me.'] : ['delete the message from {s}.',
          'remove the message {s} sent me.'], { s }),
      };
    },
  },
  {
    name: 'delete_id',
    make(c) {
      if (!c.state.inbox.length) return null;
      const id = c.rng.pick(c.state.inbox).id;
      return {
        calls: [call('delete_message', { message_id: id })],
        text: say(c.rng, ['delete message {id}.', 'remove the message with id {id}.'], { id }),
        miss: { text: say(c.rng, ['delete one of my messages.', 'remove a message for me.']),
          supply: say(c.rng, ['the id is {id}.', 'it is message {id}.'], { id }) },
      };
    },
  },
  {
    name: 'search',
    make(c) {
      const words = c.state.inbox.flatMap((m) => m.text.split(' ')).filter((w) => w.length >= 4);
      const k = words.length ? c.rng.pick(words) : c.rng.pick(['meeting', 'lunch', 'report']);
      return {
        calls: [call('search_messages', { keyword: k })],
        text: say(c.rng, ['find messages about {k}.', 'search my messages for "{k}".', 'which messages mention {k}?'],
          { k }),
        miss: { text: say(c.rng, ['search my messages for a word.', 'find some messages for me.']),
          supply: say(c.rng, ['the word is {k}.', 'look for "{k}".'], { k }) },
      };
    },
  },
];
