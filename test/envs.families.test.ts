import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../lib/prng';
import { FAMILIES, TRAIN_FAMILIES, OOD_FAMILIES, createFamily } from '../lib/envs/families/index';
import { canonicalJson, deepEqualJson } from '../lib/envs/families/base';

const fsState = () => ({ cwd: [] as string[], root: { docs: { 'a.txt': 'hello' }, 'b.txt': 'world' } });

test('registry: >= 4 training families, a disjoint held-out family, 5-7 functions each', () => {
  assert.ok(TRAIN_FAMILIES.length >= 4);
  assert.ok(OOD_FAMILIES.length >= 1);
  for (const f of OOD_FAMILIES) assert.ok(!TRAIN_FAMILIES.includes(f));
  const trainNames = new Set(TRAIN_FAMILIES.flatMap((f) => FAMILIES[f].tools.map((t) => t.name)));
  for (const f of OOD_FAMILIES) for (const t of FAMILIES[f].tools) assert.ok(!trainNames.has(t.name), t.name);
  for (const f of Object.values(FAMILIES)) {
    assert.ok(f.tools.length >= 5 && f.tools.length <= 7, f.name);
    for (const t of f.tools) {
      const words = t.description.split(' ').length;
      assert.ok(words >= 3 && words <= 6, `${t.name}: "${t.description}"`);
      assert.match(t.name, /^[a-z]+(_[a-z]+)*$/);
      for (const p of t.params) assert.match(p.name, /^[a-z]+(_[a-z]+)*$/);
    }
  }
  assert.throws(() => createFamily('nope', {}), /unknown family "nope"/);
});

test('file system: cd / ls / mkdir / cat / mv / rm happy paths', () => {
  const fs = createFamily('file_system', fsState());
  assert.deepEqual(fs.call('ls', {}), { ok: true, result: '{"items": ["b.txt", "docs"]}' });
  assert.deepEqual(fs.call('cd', { folder: 'docs' }), { ok: true, result: '{"current_directory": "docs"}' });
  assert.equal(fs.call('cat', { file_name: 'a.txt' }).result, '{"content": "hello"}');
  assert.equal(fs.call('mkdir', { folder: 'old' }).ok, true);
  assert.equal(fs.call('mv', { source: 'a.txt', destination: 'old' }).ok, true);
  assert.equal(fs.call('cd', { folder: 'old' }).ok, true);
  assert.equal(fs.call('mv', { source: 'a.txt', destination: 'c.txt' }).result, '{"moved": "a.txt", "to": "c.txt"}');
  assert.equal(fs.call('rm', { file_name: 'c.txt' }).ok, true);
  assert.equal(fs.call('cd', { folder: '..' }).result, '{"current_directory": "docs"}');
  assert.equal(fs.call('cd', { folder: '..' }).result, '{"current_directory": "home"}');
  assert.deepEqual(fs.getState(), { cwd: [], root: { docs: { old: {} }, 'b.txt': 'world' } });
});

test('argument validation: unknown function, missing, wrong type, unknown argument, bad value; state untouched', () => {
  const fs = createFamily('file_system', fsState());
  const before = canonicalJson(fs.getState());
  const cases: [unknown, unknown, RegExp][] = [
    ['format_disk', {}, /unknown function format_disk/],
    ['cd', {}, /missing required argument folder/],
    ['cd', { folder: 3 }, /must be of type string/],
    ['cd', { folder: 'docs', fast: true }, /unknown argument fast/],
    ['cd', { folder: 'nowhere' }, /no folder named nowhere/],
    ['cd', { folder: '..' }, /already at the top/],
    ['rm', { file_name: 'docs' }, /no file named docs/],
    ['mkdir', { folder: 'docs' }, /already exists/],
    ['mkdir', { folder: 'a/b' }, /bad name/],
    ['cd', [1, 2], /must be an object/],
    [42, {}, /name must be a string/],
  ];
  for (const [name, args, re] of cases) {
    const r = fs.call(name, args);
    assert.equal(r.ok, false, `${String(name)} ${JSON.stringify(args)}`);
    assert.match(r.result, /^Error: /);
    assert.match(r.result, re);
  }
  assert.equal(canonicalJson(fs.getState()), before);
});

test('messaging: contacts gate sending; inbox ids; search', () => {
  const m = createFamily('messaging', { contacts: ['bob'], inbox: [{ id: 3, sender: 'bob', text: 'lunch is ready' }], sent: [], next_id: 10 });
  assert.match(m.call('send_message', { receiver: 'ivy', text: 'hi' }).result, /ivy is not a contact/);
  assert.equal(m.call('add_contact', { name: 'ivy' }).result, '{"added": "ivy"}');
  assert.equal(m.call('send_message', { receiver: 'ivy', text: 'hi' }).result, '{"sent": true, "message_id": 10}');
  assert.equal(m.call('search_messages', { keyword: 'lunch' }).result, '{"results": [{"id": 3, "sender": "bob", "text": "lunch is ready"}]}');
  assert.match(m.call('delete_message', { message_id: '3' }).result, /must be of type integer/);
  assert.match(m.call('delete_message', { message_id: 4 }).result, /no message with id 4/);
  assert.equal(m.call('delete_message', { message_id: 3 }).ok, true);
  assert.equal(m.call('view_inbox', {}).result, '{"messages": []}');
});

test('trading: orders, balance check, cancel, bad side', () => {
  const t = createFamily('trading', { balance: 1000, prices: { AAPL: 100 }, orders: [], next_id: 7 });
  assert.equal(t.call('get_stock_price', { symbol: 'AAPL' }).result, '{"symbol": "AAPL", "price": 100}');
  assert.match(t.call('get_stock_price', { symbol: 'XYZ' }).result, /unknown symbol XYZ/);
  assert.match(t.call('place_order', { symbol: 'AAPL', side: 'hold', amount: 1 }).result, /side must be buy or sell/);
  assert.match(t.call('place_order', { symbol: 'AAPL', side: 'buy', amount: 11 }).result, /not enough balance/);
  assert.match(t.call('place_order', { symbol: 'AAPL', side: 'buy', amount: 1.5 }).result, /type integer/);
  assert.equal(t.call('place_order', { symbol: 'AAPL', side: 'buy', amount: 10 }).result, '{"order_id": 7, "status": "open"}');
  assert.equal(t.call('cancel_order', { order_id: 7 }).result, '{"order_id": 7, "status": "cancelled"}');
  assert.match(t.call('cancel_order', { order_id: 7 }).result, /not open/);
  assert.equal(t.call('get_balance', {}).result, '{"balance": 1000}');
});

test('vehicle: brake before engine, temperature range, fuel overflow, boolean lock', () => {
  const v = createFamily('vehicle', { engine: 'off', brake: 'released', doors: 'unlocked', temperature: 20, fuel: 45 });
  assert.match(v.call('start_engine', {}).result, /press the brake first/);
  assert.equal(v.call('press_brake', {}).ok, true);
  assert.equal(v.call('start_engine', {}).result, '{"engine": "on"}');
  assert.match(v.call('lock_doors', { lock: 'yes' }).result, /type boolean/);
  assert.equal(v.call('lock_doors', { lock: true }).result, '{"doors": "locked"}');
  assert.match(v.call('set_temperature', { degrees: 40 }).result, /between 16 and 30/);
  assert.match(v.call('fill_fuel', { liters: 10 }).result, /overflow/);
  assert.equal(v.call('fill_fuel', { liters: 5 }).result, '{"fuel": 50}');
  assert.equal(v.call('get_fuel_level', {}).result, '{"fuel": 50, "tank": 50}');
});

test('reminders (held out): add, complete, retime, time format', () => {
  const r = createFamily('reminders', { reminders: [], next_id: 5 });
  assert.match(r.call('add_reminder', { title: 'call mom', time: '9am' }).result, /time must look like/);
  assert.equal(r.call('add_reminder', { title: 'call mom', time: '09:30' }).result, '{"reminder_id": 5}');
  assert.equal(r.call('complete_reminder', { reminder_id: 5 }).ok, true);
  assert.match(r.call('complete_reminder', { reminder_id: 5 }).result, /already done/);
  assert.equal(r.call('set_reminder_time', { reminder_id: 5, time: '10:00' }).ok, true);
  assert.equal(r.call('view_reminders', {}).result, '{"reminders": [{"id": 5, "title": "call mom", "time": "10:00", "done": true}]}');
  assert.equal(r.call('delete_reminder', { reminder_id: 5 }).ok, true);
});

test('states are plain JSON, deep-comparable, and copies (no aliasing)', () => {
  for (const name of Object.keys(FAMILIES)) {
    for (const long of [false, true]) {
      const s = FAMILIES[name].randomState(new Rng(3), { long });
      assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
      const a = createFamily(name, s);
      const b = createFamily(name, JSON.parse(JSON.stringify(s)));
      assert.ok(deepEqualJson(a.getState(), b.getState()));
      const copy = a.getState() as { [k: string]: unknown };
      copy.tampered = 1;
      assert.ok(deepEqualJson(a.getState(), b.getState()), 'getState returns a copy');
    }
  }
  assert.ok(deepEqualJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  assert.ok(!deepEqualJson({ a: [1, 2] }, { a: [2, 1] }));
});
