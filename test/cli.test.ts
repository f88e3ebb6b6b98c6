// The command line's small contracts, in process: the progress bar's last line, aligned help, and strict
// argument parsing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProgressBar } from '../lib/util/progress';
import { CommandSpec, UsageError, commandHelp, parseArgs, positiveInt } from '../lib/cli/args';

/** A non-TTY stream that records what is written (as in a log file or a pipe). */
function sink(): { stream: NodeJS.WriteStream; lines: () => string[] } {
  let text = '';
  const stream = { isTTY: false, write: (s: string) => { text += s; return true; } } as unknown as NodeJS.WriteStream;
  return { stream, lines: () => text.split('\n').filter((l) => l !== '') };
}

test('a progress bar prints its 100% line once, with the last status', () => {
  const s = sink();
  const bar = new ProgressBar({ total: 3, label: 'rl', stream: s.stream, minIntervalMs: 0 });
  for (let i = 1; i <= 3; i++) bar.update(i, `r 0.${i}`);
  bar.finish();
  bar.finish();
  const done = s.lines().filter((l) => / 3\/3 100% /.test(l));
  assert.equal(done.length, 1, s.lines().join('\n'));
  assert.match(done[0], /\| r 0\.3$/);
  assert.equal(s.lines().length, 3);
});

test('a resumed progress bar estimates the rest from the units this process did', async () => {
  const s = sink();
  const bar = new ProgressBar({ total: 100, label: 'rl', stream: s.stream, minIntervalMs: 0, done: 50 });
  await new Promise((r) => setTimeout(r, 200));
  bar.update(51); // one unit in ~0.2 s, 49 left: ~10 s, where counting the 50 resumed units would say ~0 s
  const eta = /eta (\d+)s/.exec(s.lines()[0]);
  assert.ok(eta && Number(eta[1]) >= 8, s.lines()[0]);
});

const SPEC: CommandSpec = {
  name: 'eval', summary: 's',
  options: {
    split: { kind: 'string', choices: ['id', 'format_ood', 'content_ood'], help: 'which test set', default: 'id' },
    limit: { kind: 'number', help: 'tasks per category' },
    json: { kind: 'flag', help: 'as JSON' },
  },
};

test('help: the help column starts at the same place on every line', () => {
  const rows = commandHelp(SPEC).split('\n').filter((l) => l.startsWith('  --'));
  const cols = rows.map((l) => l.search(/ {2}\S[^-]*$/) + 2);
  assert.equal(new Set(cols).size, 1, rows.join('\n'));
  assert.ok(rows.every((l) => /\S {2,}\S/.test(l)), 'at least two spaces before every help text');
});

test('arguments: errors are UsageErrors without a command prefix; --limit must be a positive integer', () => {
  assert.throws(() => parseArgs(SPEC, ['--nope']), (e: Error) => e instanceof UsageError && e.message.startsWith('unknown option "--nope"'));
  assert.throws(() => parseArgs(SPEC, ['--split', 'x']), (e: Error) => e instanceof UsageError && e.message.startsWith('--split must be one of'));
  assert.equal(parseArgs(SPEC, ['--limit', '2']).limit, 2);
  for (const bad of [-1, 0, 1.5]) assert.throws(() => positiveInt('--limit', bad), /--limit must be an integer >= 1/);
});
