/**
 * A messaging service, after BFCL-V3's MessageAPI (docs/design.md A.1). Messages can only go to a contact, so
 * "add a contact, then send" is a state dependency; deleting "the message from X" needs the id that
 * `view_inbox` returns, a result dependency.
 *
 * State: `{contacts: string[], inbox: {id, sender, text}[], sent: {id, receiver, text}[], next_id}`.
 */
import type { JsonValue } from '../../format/types';
import { Rng } from '../../prng';
import { ApiError, ApiFamily, Args, tool } from './base';
import { CONTACTS, MESSAGE_TEXTS } from '../pools';

export type InboxItem = { id: number; sender: string; text: string };
export type SentItem = { id: number; receiver: string; text: string };
export type MsgState = { contacts: string[]; inbox: InboxItem[]; sent: SentItem[]; next_id: number };

export const MSG_TOOLS = [
  tool('send_message', 'send a message to a contact', ['receiver', 'string'], ['text', 'string']),
  tool('view_inbox', 'show received messages'),
  tool('delete_message', 'delete a received message', ['message_id', 'integer']),
  tool('search_messages', 'find messages with a word', ['keyword', 'string']),
  tool('add_contact', 'add a new contact', ['name', 'string']),
];

export class Messaging extends ApiFamily<MsgState> {
  readonly name = 'messaging';
  readonly tools = MSG_TOOLS;

  protected handle(name: string, a: Args): JsonValue {
    const s = this.state;
    switch (name) {
      case 'send_message': {
        const r = a.receiver as string;
        const t = a.text as string;
        if (!s.contacts.includes(r)) throw new ApiError(`${r} is not a contact`);
        if (t.trim() === '') throw new ApiError('text is empty');
        const id = s.next_id++;
        s.sent.push({ id, receiver: r, text: t });
        return { sent: true, message_id: id };
      }
      case 'view_inbox':
        return { messages: s.inbox.map((m) => ({ id: m.id, sender: m.sender, text: m.text })) };
      case 'delete_message': {
        const id = a.message_id as number;
        const i = s.inbox.findIndex((m) => m.id === id);
        if (i < 0) throw new ApiError(`no message with id ${id}`);
        s.inbox.splice(i, 1);
        return { deleted: id };
      }
      case 'search_messages': {
        const k = (a.keyword as string).toLowerCase();
        if (k.trim() === '') throw new ApiError('keyword is empty');
        return { results: s.inbox.filter((m) => m.text.toLowerCase().includes(k)).map((m) =>
          ({ id: m.id, sender: m.sender, text: m.text })) };
      }
      case 'add_contact': {
        const n = a.name as string;
        if (!/^[A-Za-z]{1,20}$/.test(n)) throw new ApiError(`bad name ${n}`);
        if (s.contacts.includes(n)) throw new ApiError(`${n} is already a contact`);
        s.contacts.push(n);
        return { added: n };
      }
    }
    throw new ApiError(`unknown function ${name}`);
  }

  /** 3-6 contacts, 1-4 inbox messages from them; `long` gives 14-20 messages (long_context). */
  static randomState(rng: Rng, opts: { long?: boolean } = {}): MsgState {
    const contacts = rng.sample(CONTACTS, rng.int(3, 6));
    const inbox: InboxItem[] = [];
    const n = opts.long ? rng.int(14, 20) : rng.int(1, 4);
    let id = rng.int(1, 20);
    for (let i = 0; i < n; i++) inbox.push({ id: id++, sender: rng.pick(contacts), text: rng.pick(MESSAGE_TEXTS) });
    return { contacts, inbox, sent: [], next_id: id + rng.int(1, 30) };
  }
}
