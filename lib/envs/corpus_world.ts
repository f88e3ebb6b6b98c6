/**
 * World-function conversations of the general corpus: requests for the training families' functions, written
 * with phrasings the task generator never uses ("Print the contents of notes.txt" vs "Read notes.txt for me").
 * They give the "instruct" base model partial skill on the world (docs/design.md B: a non-zero success rate, so GRPO
 * has signal) without copying the task distribution.
 */
import type { ToolCall } from '../format/types';
import { Rng } from '../prng';
import { Dir, FsState, isDir } from './families/filesystem';
import { MsgState } from './families/messaging';
import { TradeState } from './families/trading';
import { CarState, TANK_SIZE } from './families/vehicle';
import { CONTACTS, MESSAGE_TEXTS, NEW_FOLDERS, SYMBOLS } from './pools';
import { call, say } from './intents/common';

export interface WorldRequest {
  text: string;
  calls: ToolCall[];
}

type Maker = (s: never, rng: Rng) => WorldRequest | null;

const MESSAGE_WORDS = Array.from(new Set(MESSAGE_TEXTS.flatMap((t) => t.split(' ')).filter((w) =>
  w.length >= 4))).sort();

const fsTop = (s: FsState): Dir => s.root;
const FS: ((s: FsState, r: Rng) => WorldRequest | null)[] = [
  (s, r) => ({ text: say(r, ['can you show the contents of the current directory?', 'print the directory listing.']),
    calls: [call('ls')] }),
  (s, r) => {
    const fs = Object.keys(fsTop(s)).filter((k) => isDir(fsTop(s)[k]));
    if (!fs.length) return null;
    const f = r.pick(fs);
    return { text: say(r, ['change directory to {f}.', 'navigate to the {f} directory.'], { f }),
      calls: [call('cd', { folder: f })] };
  },
  (s, r) => {
    const d = r.pick(NEW_FOLDERS);
    if (fsTop(s)[d] !== undefined) return null;
    return { text: say(r, ['please create a directory named {d}.', 'add a directory called {d}.'], { d }),
      calls: [call('mkdir', { folder: d })] };
  },
  (s, r) => {
    const fl = Object.keys(fsTop(s)).filter((k) => typeof fsTop(s)[k] === 'string');
    if (!fl.length) return null;
    const n = r.pick(fl);
    return r.chance(0.5)
      ? { text: say(r, ['print the contents of {n}.', 'display the text of {n}.'], { n }),
        calls: [call('cat', { file_name: n })] }
      : { text: say(r, ['erase the file {n} from this directory.', 'trash {n}.'], { n }),
        calls: [call('rm', { file_name: n })] };
  },
];

const MSG: ((s: MsgState, r: Rng) => WorldRequest | null)[] = [
  (s, r) => {
    const rc = r.pick(s.contacts);
    const t = r.pick(MESSAGE_TEXTS);
    return { text: say(r, ['could you shoot a quick note to {rc} that says "{t}"?', 'drop {rc} a line: "{t}".'],
      { rc, t }), calls: [call('send_message', { receiver: rc, text: t })] };
  },
  (s, r) => ({ text: say(r, ['open my mailbox.', 'anything new in my mail?']), calls: [call('view_inbox')] }),
  (s, r) => {
    const free = CONTACTS.filter((c) => !s.contacts.includes(c));
    if (!free.length) return null;
    const n = r.pick(free);
    return { text: say(r, ['put {n} into my address book.', 'store {n} as a contact.'], { n }),
      calls: [call('add_contact', { name: n })] };
  },
  (s, r) => {
    if (!s.inbox.length) return null;
    const id = r.pick(s.inbox).id;
    return { text: say(r, ['erase message number {id}.', 'trash message {id}.'], { id }),
      calls: [call('delete_message', { message_id: id })] };
  },
  (s, r) => {
    const k = r.pick(MESSAGE_WORDS);
    return { text: say(r, ['scan my mail for the word {k}.', 'grep my messages for {k}.'], { k }),
      calls: [call('search_messages', { keyword: k })] };
  },
];

const TRADE: ((s: TradeState, r: Rng) => WorldRequest | null)[] = [
  (s, r) => {
    const sym = r.pick(SYMBOLS);
    return { text: say(r, ['quote me {sym}.', 'how is {sym} priced right now?'], { sym }),
      calls: [call('get_stock_price', { symbol: sym })] };
  },
  (s, r) => {
    const sym = r.pick(SYMBOLS);
    const n = Math.min(10, Math.floor(s.balance / s.prices[sym]));
    if (n < 1) return null;
    return { text: say(r, ['I would like to purchase {n} units of {sym}.', 'acquire {n} units of {sym} for me.'],
      { n, sym }), calls: [call('place_order', { symbol: sym, side: 'buy', amount: n })] };
  },
  (s, r) => {
    const open = s.orders.filter((o) => o.status === 'open');
    if (!open.length) return null;
    const id = r.pick(open).id;
    return { text: say(r, ['withdraw order number {id}.', 'call off order {id}.'], { id }),
      calls: [call('cancel_order', { order_id: id })] };
  },
  (s, r) => ({ text: say(r, ['tell me my account funds.', 'how much cash do I have?']), calls: [call('get_balance')] }),
  (s, r) => ({ text: say(r, ['pull up my past orders.', 'display every trade I made.']),
    calls: [call('get_order_history')] }),
];

const CAR: ((s: CarState, r: Rng) => WorldRequest | null)[] = [
  (s, r) => ({ text: say(r, ['secure the car doors.', 'bolt the doors shut.']),
    calls: [call('lock_doors', { lock: true })] }),
  (s, r) => ({ text: say(r, ['release the door locks.']), calls: [call('lock_doors', { lock: false })] }),
  (s, r) => {
    const d = r.int(16, 30);
    return { text: say(r, ['adjust the climate to {d} degrees.', 'I want the air at {d} degrees.'], { d }),
      calls: [call('set_temperature', { degrees: d })] };
  },
  (s, r) => {
    const room = TANK_SIZE - s.fuel;
    if (room < 1) return null;
    const l = r.int(1, Math.min(room, 20));
    return { text: say(r, ['refuel with {l} liters.', 'top up the tank by {l} liters.'], { l }),
      calls: [call('fill_fuel', { liters: l })] };
  },
  (s, r) => ({ text: say(r, ['read out the fuel gauge.', 'how full is the tank?']), calls: [call('get_fuel_level')] }),
  (s, r) => (s.engine === 'on' ? null : { text: say(r, ['fire up the motor.',
    'hold the brake pedal and crank the motor.']), calls: [call('press_brake'), call('start_engine')] }),
];

export const WORLD_REQUESTS: { [family: string]: Maker[] } = {
  file_system: FS as Maker[],
  messaging: MSG as Maker[],
  trading: TRADE as Maker[],
  vehicle: CAR as Maker[],
};
