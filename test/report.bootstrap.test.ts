// The bootstrap intervals of the tables (lib/report/stats/bootstrap.ts) on outcomes whose answer is known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../lib/prng';
import { differenceInterval, formatInterval, scoreInterval } from '../lib/report/stats/bootstrap';

const cats = ['a', 'b'];
const constant = (x: '0' | '1', n: number) => ({ a: x.repeat(n), b: x.repeat(n) });
const random = (rng: Rng, p: number, n: number) => ({
  a: Array.from({ length: n }, () => (rng.next() < p ? '1' : '0')).join(''),
  b: Array.from({ length: n }, () => (rng.next() < p ? '1' : '0')).join(''),
});

test('intervals: a certain score has no width; the mean is the mean over categories, then seeds', () => {
  assert.deepEqual(scoreInterval([constant('1', 50), constant('1', 50)], cats), { mean: 1, lo: 1, hi: 1 });
  const iv = scoreInterval([{ a: '1100', b: '1000' }], cats)!; // categories 0.5 and 0.25
  assert.equal(iv.mean, 0.375);
  assert.ok(iv.lo <= iv.mean && iv.mean <= iv.hi);
  assert.equal(scoreInterval([], cats), null);
  assert.equal(scoreInterval([{ a: '11', b: '1' }, { a: '111', b: '1' }], cats), null, 'seeds on different tasks');
  assert.equal(scoreInterval([{ a: '11' }], cats), null, 'a category missing');
});

test('intervals: width shrinks with more tasks; the same call gives the same interval', () => {
  const rng = new Rng(3);
  const small = [random(rng, 0.4, 40), random(rng, 0.4, 40)];
  const large = [random(rng, 0.4, 400), random(rng, 0.4, 400)];
  const w = (iv: ReturnType<typeof scoreInterval>) => iv!.hi - iv!.lo;
  const ws = w(scoreInterval(small, cats));
  const wl = w(scoreInterval(large, cats));
  assert.ok(wl < ws / 2, `400 tasks ${wl} vs 40 tasks ${ws}`);
  // binomial standard error of a mean over 2 x 800 outcomes at p = 0.4 is ~0.017; a 95% interval ~ +-0.034
  assert.ok(wl > 0.04 && wl < 0.12, `width ${wl}`);
  assert.deepEqual(scoreInterval(large, cats), scoreInterval(large, cats));
});

test('paired differences: a method against itself is 0; a better method is positive with an interval above 0', () => {
  const rng = new Rng(9);
  const a = [random(rng, 0.4, 200), random(rng, 0.4, 200)];
  const one = a.slice(0, 1);
  assert.deepEqual(differenceInterval(one, one, cats), { mean: 0, lo: 0, hi: 0 }, 'one seed, same tasks: every replicate is 0');
  const self = differenceInterval(a, a, cats)!;
  assert.ok(self.mean === 0 && self.lo < 0 && self.hi > 0, 'two seeds drawn independently: seed noise only');
  const all = differenceInterval([constant('1', 30)], [constant('0', 30)], cats)!;
  assert.deepEqual(all, { mean: 1, lo: 1, hi: 1 });
  // b = a with 20% of its failures turned into passes, task by task: pairing sees the gain clearly
  const better = a.map((s) => ({ a: s.a.replace(/0/g, (m) => (rng.next() < 0.2 ? '1' : m)), b: s.b.replace(/0/g, (m) => (rng.next() < 0.2 ? '1' : m)) }));
  const d = differenceInterval(better, a, cats)!;
  assert.ok(d.mean > 0.08 && d.lo > 0, `difference ${formatInterval(d)}`);
  assert.equal(differenceInterval(a, [constant('1', 10)], cats), null, 'other tasks: no pairing');
  assert.equal(formatInterval({ mean: 0.1234, lo: -0.01, hi: 0.2 }, 1, true), '+12.3 [-1.0, +20.0]');
});
