// The command line's small contracts: the progress bar's last line, aligned help, strict argument parsing (in
// process), and the error contract of every command (spawned): exit 2, one line naming the flag, no backend.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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

// ---- the command line's error contract, spawned as a user runs it ----------------------------------------

const REPO = path.resolve(__dirname, '..');

/** `toolrl ...` to completion (90 s at most: an error that does not come is a failure, not a wait). */
function toolrl(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO, 'lib', 'cli', 'main.ts'), ...args],
    { cwd: REPO, encoding: 'utf8', timeout: 90_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('argument and input errors: exit 2 before any backend starts, one stderr line naming the flag', () => {
  const none = path.join(os.tmpdir(), `toolrl-cli-missing-${process.pid}`);
  const cases: [string[], string][] = [
    [['eval', '--checkpoint', none], `--checkpoint: checkpoint: directory not found: ${none}`],
    [['eval', '--policy', 'teacher', '--data', none], '--data:'],
    [['eval', '--checkpoint', 'data/checkpoints/base', '--limit', '0x2'], '--limit must be a decimal number'],
    [['bench', '--model', '0x0x0'], '--model 0x0x0: the width D must be an integer in [1, 1024], got 0'],
    [['bench', '--model', '64x0x2'], '--model 64x0x2: the layer count L'],
    [['bench', '--model', '64x2x3'], '--model 64x2x3: the width D (64) must be a multiple of the head count H (3)'],
    [['bench', '--runs', '0'], '--runs must be an integer >= 1'],
    [['bench', '--prompts', '10'], '--prompts must be 1 to 7 or a multiple of 4'],
    [['bench', '--parts', 'train,gpu'], '--parts must list some of train, sample, rollout, grpo'],
    [['bench', '--regime', 'weak'], '--regime'],
    [['calibrate'], '--checkpoint DIR is required'],
    [['calibrate', '--checkpoint', none], '--checkpoint: checkpoint: directory not found'],
    [['run', '--config', 'vanilla-rl', '--seed', '0x10', '--out', none], '--seed must be an integer in [0, 4294967295]'],
    [['run', '--config', 'vanilla-rl', '--init', none, '--out', none], `${none}, which has no model.json`],
    [['run', '--config', 'vanilla-rl', '--data', none, '--out', none], `${none}/vocab.json`],
    [['run', '--config', 'vanilla-rl', '--set', 'grpo.groupSize=100000', '--out', none], 'grpo.groupSize must be an integer in [1, 64]'],
    [['run', '--config', 'vanilla-rl', '--set', 'grpo.klCoef=-1', '--out', none], 'grpo.klCoef must be'],
    [['reproduce', '--seeds', 'one'], '--seeds must be an integer'],
    [['report', '--results', none], `--results ${none}: no results store`],
  ];
  for (const [args, named] of cases) {
    const r = toolrl(args);
    const what = `toolrl ${args.join(' ')}`;
    assert.equal(r.status, 2, `${what}: ${r.stderr}`);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, `${what}: one line, got ${r.stderr}`);
    assert.ok(lines[0].startsWith(`toolrl ${args[0]}: error: `), `${what}: ${lines[0]}`);
    assert.ok(!lines[0].includes(`${args[0]}: ${args[0]}:`), `${what}: the command named twice: ${lines[0]}`);
    assert.ok(lines[0].includes(named), `${what}: names ${named}: ${lines[0]}`);
    assert.ok(!/tfjs backend/.test(r.stderr + r.stdout), `${what}: a backend started`);
    assert.ok(!fs.existsSync(none), `${what}: created ${none}`);
  }
});

test('tfjs says nothing of its own: no "running TensorFlow.js in Node.js" banner from the pure-JS backend', async () => {
  const warned: string[] = [];
  const warn = console.warn;
  console.warn = (...a: unknown[]) => { warned.push(a.join(' ')); };
  try {
    const { initBackend } = await import('../lib/backend');
    const tf = await import('@tensorflow/tfjs');
    await initBackend({ backend: 'cpu' });
    tf.tidy(() => tf.add(tf.tensor1d([1, 2]), 1).dataSync());
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(warned.filter((w) => /TensorFlow\.js in Node\.js/.test(w)), []);
});

test('a pipe closed early (`toolrl run --list | head -1`) ends the command quietly with exit 0', () => {
  const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" bin/toolrl.js run --list | head -1`], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.split('\n').filter(Boolean).length, 1);
  assert.doesNotMatch(r.stderr, /EPIPE|Unhandled/);
});
