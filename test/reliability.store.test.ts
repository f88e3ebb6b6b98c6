// Run folders and the commands around them, a second hostile-but-honest probe: a --force that fails half-way
// (all or nothing), the report's word on unfinished runs, the --results a suggested command must carry, the exit
// code of a damaged resume state, and a lock whose pid another process now has. Cheap: no run trains here (the
// command-line probes are refused, or read committed results).
//
// Making a removal fail: chmod 0o500 binds an ordinary user only, so as root the test uses `chattr +i` (immutable:
// neither renamed nor unlinked) where the file system and capabilities allow it, else the store's seam
// (clearOps) fails the same operation; each test's diagnostic line says which.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RunFolder, RunIdentity, clearOps, unfinishedReason } from '../lib/experiments/store/folder';
import { loadResumeState } from '../lib/experiments/store/resume';
import { loadTokenizer } from '../lib/format/tokenizer';

const REPO = path.resolve(__dirname, '..');
const CLI = [path.join(REPO, 'lib', 'cli', 'main.ts')];
const COMMITTED = path.join(REPO, 'data', 'results', 'full', 'vanilla-rl', 'seed-1');
const SET = ['--set', 'grpo.steps=4', '--backend', 'wasm'];
const RUN = ['run', '--config', 'vanilla-rl', '--preset', 'smoke', '--seed', '1', ...SET];

const tmp = (tag: string) => fs.mkdtempSync(path.join(os.tmpdir(), `toolrl-store-${tag}-`));

function toolrl(args: string[], timeout = 120_000): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', ...CLI, ...args], { cwd: REPO, encoding: 'utf8', timeout });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The error line of a command that failed with `code`: exactly one line on stderr in the command's style. */
function errorLine(r: { status: number | null; stderr: string }, code: number): string {
  assert.equal(r.status, code, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('toolrl '));
  assert.equal(lines.length, 1, r.stderr);
  return lines[0];
}

// ---- --force: all or nothing ----------------------------------------------------------------------------

const IDENTITY: RunIdentity = { config: 'vanilla-rl', preset: 'smoke', regime: 'strong', seed: 1, overrides: {}, init: null,
  backend: 'wasm', data: 'x' };

/** A finished run folder as the tool leaves it, with a user's note and the launcher's run.log. */
function finishedFolder(): string {
  const dir = path.join(tmp('force'), 'run');
  for (const d of ['best', 'checkpoint/sub', 'resume']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(IDENTITY));
  fs.writeFileSync(path.join(dir, 'summary.json'), JSON.stringify({ ...IDENTITY, eval: {} }));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), '{"step":1}\n');
  fs.writeFileSync(path.join(dir, 'best', 'model.json'), '{}');
  fs.writeFileSync(path.join(dir, 'checkpoint', 'model.json'), '{}');
  fs.writeFileSync(path.join(dir, 'checkpoint', 'sub', 'weights.bin'), 'w');
  fs.writeFileSync(path.join(dir, 'resume', 'state.json'), '{}');
  fs.writeFileSync(path.join(dir, 'run.log'), 'the log\n');
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine\n');
  assert.equal(unfinishedReason(dir), null);
  return dir;
}

type Freeze = 'chmod' | 'chattr' | 'seam';

/** How this process can make a removal fail: chmod as a user, chattr +i as root where it works, else the seam. */
function freezeKind(): Freeze {
  if (process.getuid?.() !== 0) return 'chmod';
  const probe = path.join(tmp('probe'), 'f');
  fs.writeFileSync(probe, '');
  const ok = spawnSync('chattr', ['+i', probe]).status === 0;
  if (ok) spawnSync('chattr', ['-i', probe]);
  return ok ? 'chattr' : 'seam';
}
// TOOLRL_TEST_FREEZE=seam|chattr|chmod forces one way (to check each where the machine allows it)
const FREEZE = (process.env.TOOLRL_TEST_FREEZE as Freeze | undefined) ?? freezeKind();

/**
 * Make `target` stop the clear: `what` 'move' makes the entry itself unmovable (chmod 0o500 on a folder, so its
 * `..` cannot change; chattr +i), 'delete' makes a file inside undeletable (chmod 0o500 on its folder; chattr +i
 * on the file). Returns the undo, which takes the target's path now (it may have moved into the staging folder).
 */
function freeze(target: string, what: 'move' | 'delete'): (now: string) => void {
  if (FREEZE === 'seam') {
    const saved = { ...clearOps };
    const name = path.basename(target);
    if (what === 'move') clearOps.rename = (from, to) => (path.basename(from) === name ? fail(from) : saved.rename(from, to));
    else clearOps.remove = (dir) => fail(dir);
    return () => Object.assign(clearOps, saved);
  }
  const p = what === 'delete' && FREEZE === 'chmod' ? path.dirname(target) : target;
  if (FREEZE === 'chmod') fs.chmodSync(p, 0o500);
  else assert.equal(spawnSync('chattr', ['+i', p]).status, 0);
  return (now) => {
    const q = what === 'delete' && FREEZE === 'chmod' ? path.dirname(now) : now;
    if (FREEZE === 'chmod') fs.chmodSync(q, 0o755);
    else spawnSync('chattr', ['-i', q]);
  };
}

function fail(p: string): never {
  throw Object.assign(new Error(`EPERM: operation not permitted (test seam), ${p}`), { code: 'EPERM' });
}

/** The staging folder of a clear (store.ts CLEARING_DIR), spelt out so that this file runs against a store without one. */
const CLEARING = '.clearing';

const forceOpen = (dir: string) => {
  const f = new RunFolder(dir);
  f.open(IDENTITY, 'force');
  f.close();
};

/** The error of a --force that must fail (its state is checked before its message: the guarantee comes first). */
function failedForce(dir: string): Error {
  try {
    forceOpen(dir);
  } catch (e) {
    return e as Error;
  }
  assert.fail('the --force was expected to fail');
}

test('--force is all or nothing: an entry that cannot be moved aside leaves every entry in place, still finished', (t) => {
  t.diagnostic(`removal made to fail with: ${FREEZE}`);
  const dir = finishedFolder();
  const thaw = freeze(path.join(dir, 'checkpoint'), 'move');
  let err: Error;
  try {
    err = failedForce(dir);
  } finally {
    thaw(path.join(dir, 'checkpoint'));
  }
  for (const e of ['best/model.json', 'checkpoint/sub/weights.bin', 'metrics.jsonl', 'resume/state.json', 'summary.json', 'run.json']) {
    assert.ok(fs.existsSync(path.join(dir, e)), `${e} is still there`);
  }
  assert.ok(!fs.existsSync(path.join(dir, CLEARING)), 'no staging folder left');
  assert.equal(unfinishedReason(dir), null, 'a failed --force leaves a finished run finished');
  assert.ok(err.message.includes(`cannot move checkpoint aside`) && /nothing was removed/.test(err.message), err.message);
  forceOpen(dir); // the obstacle gone, the same --force clears
  assert.deepEqual(fs.readdirSync(dir).sort(), ['notes.txt', 'run.json', 'run.log']);
  assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'mine\n');
  assert.equal(fs.readFileSync(path.join(dir, 'run.log'), 'utf8'), 'the log\n');
});

test('--force: a staging folder that cannot be deleted leaves the run unfinished; a later --force finishes the deletion', (t) => {
  t.diagnostic(`removal made to fail with: ${FREEZE}`);
  const dir = finishedFolder();
  const frozen = path.join('checkpoint', 'sub', 'weights.bin');
  const thaw = freeze(path.join(dir, frozen), 'delete');
  const staging = path.join(dir, CLEARING);
  try {
    const err = failedForce(dir);
    const why = unfinishedReason(dir);
    assert.ok(why !== null && why.includes(staging), `unfinished because of the staging folder: ${why}`);
    assert.ok(err.message.startsWith(`--force: cannot delete ${staging}`) && /reads as unfinished until a later --force/.test(err.message),
      err.message);
    assert.ok(!fs.existsSync(path.join(dir, 'summary.json')) && !fs.existsSync(path.join(dir, 'best')), 'the old results are out of the way');
    assert.ok(fs.existsSync(path.join(dir, 'run.json')), 'the folder stays a run folder of ours');
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'mine\n');
    assert.throws(() => forceOpen(dir), /left by an earlier --force/, 'still stuck: a second --force says what is left');
  } finally {
    for (const p of [path.join(staging, frozen), path.join(dir, frozen)]) if (fs.existsSync(p)) thaw(p);
  }
  forceOpen(dir);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['notes.txt', 'run.json', 'run.log']);
});

// ---- the report's word on unfinished runs, and the --results of a suggested command -----------------------

test('toolrl report lists the unfinished run folders it leaves out, in the terminal', { timeout: 300_000 }, () => {
  const root = tmp('report');
  const store = path.join(root, 'full');
  const ignored = new Set(['checkpoint', 'best', 'resume', 'branches', 'rollouts.jsonl', '.lock']);
  fs.cpSync(COMMITTED, path.join(store, 'vanilla-rl', 'seed-1'), { recursive: true, filter: (src) => !ignored.has(path.basename(src)) });
  fs.mkdirSync(path.join(store, 'vanilla-rl', 'seed-2'));
  fs.writeFileSync(path.join(store, 'vanilla-rl', 'seed-2', 'run.json'), JSON.stringify({ ...IDENTITY, preset: 'full', seed: 2 }));
  const r = toolrl(['report', '--preset', 'full', '--results', root, '--no-png'], 300_000);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.includes(`not finished, left out of the report: 1 run folder(s) under ${store}: vanilla-rl/seed-2\n`), r.stdout);
});

test('an empty store: report and reproduce suggest the command with the --results they were given', { timeout: 300_000 }, () => {
  const root = tmp('empty');
  const hint = `npx toolrl reproduce --preset micro --regime instruct --results ${root}`;
  assert.ok(errorLine(toolrl(['report', '--preset', 'micro', '--regime', 'instruct', '--results', root]), 2).includes(hint));
  fs.mkdirSync(path.join(root, 'micro-instruct', 'vanilla-rl', 'seed-1'), { recursive: true }); // a store, nothing finished
  const none = errorLine(toolrl(['report', '--preset', 'micro', '--regime', 'instruct', '--results', root]), 1);
  assert.ok(none.includes(`no finished runs under ${path.join(root, 'micro-instruct')}`) && none.includes(hint), none);
  // reproduce whose only run fails (a folder that is not the tool's, refused untouched): no report, and the same hint
  const other = tmp('empty-reproduce');
  fs.mkdirSync(path.join(other, 'micro', 'vanilla-rl', 'seed-1'), { recursive: true });
  fs.writeFileSync(path.join(other, 'micro', 'vanilla-rl', 'seed-1', 'notes.txt'), 'x\n');
  const rep = errorLine(toolrl(['reproduce', '--preset', 'micro', '--only', 'vanilla-rl', '--seeds', '1', '--jobs', '1', '--no-png',
    '--backend', 'wasm', '--results', other], 300_000), 1);
  assert.ok(rep.includes(`no report: no finished runs under ${path.join(other, 'micro')}`) &&
    rep.includes(`npx toolrl reproduce --preset micro --results ${other}`), rep);
});

// ---- a damaged resume state: exit 2 naming the file ------------------------------------------------------

const META = { stage: 0, globalStepBase: 0, metricsLines: 0, rolloutBytes: 0, trainer: { step: 1, rngState: 1 },
  optimizer: { stepCount: 1, tensors: [{ name: 'w', which: 'm', length: 2 }] } };

test('a damaged resume state is a bad input file: exit 2 naming the file, in process and from the command line', { timeout: 300_000 }, () => {
  const dir = path.join(tmp('resume'), 'run');
  const state = path.join(dir, 'resume');
  fs.mkdirSync(state, { recursive: true });
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ config: 'vanilla-rl', preset: 'smoke', seed: 1 }));
  const stateFile = path.join(state, 'state.json');
  const bin = path.join(state, 'optimizer.bin');
  const tok = loadTokenizer(path.join(REPO, 'data', 'vocab.json'));
  const refusedWith = (text: string) => assert.throws(() => loadResumeState(dir, tok, IDENTITY).model.dispose(),
    (e: Error & { exitCode?: number }) => e.exitCode === 2 && e.message.includes(text), text);
  fs.writeFileSync(stateFile, '{"stage": 0, "glob');
  refusedWith(`${stateFile}: resume state is not valid JSON`);
  fs.writeFileSync(stateFile, JSON.stringify({ ...META, stage: -1 }));
  refusedWith(`${stateFile}: "stage" must be an integer >= 0`);
  fs.writeFileSync(stateFile, JSON.stringify(META));
  refusedWith(`missing file ${bin}`);
  fs.writeFileSync(bin, Buffer.alloc(4));
  refusedWith(`${bin} has 4 bytes, ${stateFile} says 8`);
  // the state's policy with flipped bits
  fs.writeFileSync(stateFile, JSON.stringify({ ...META, optimizer: { stepCount: 1, tensors: [] } }));
  fs.writeFileSync(bin, Buffer.alloc(0));
  fs.cpSync(path.join(REPO, 'data', 'checkpoints', 'base'), path.join(state, 'model'), { recursive: true });
  const weights = path.join(state, 'model', 'weights.bin');
  const w = fs.readFileSync(weights);
  w[4096] ^= 0xff;
  fs.writeFileSync(weights, w);
  refusedWith(`${weights} is corrupt`);
  // the command line: `toolrl run --resume` over a torn state.json exits 2, its one error line naming the file
  fs.writeFileSync(stateFile, '{"stage": 0, "glob');
  const line = errorLine(toolrl([...RUN, '--out', dir, '--resume'], 300_000), 2);
  assert.ok(line.startsWith(`toolrl run: error: ${stateFile}: resume state is not valid JSON`), line);
});

// ---- a lock whose pid another process has now ------------------------------------------------------------

test('a lock whose pid now belongs to another live process: exit 3 naming the pid, its start, the command and how to clear it', async () => {
  const dir = path.join(tmp('lock'), 'run');
  fs.mkdirSync(dir);
  const lock = path.join(dir, '.lock');
  const other = spawn('sleep', ['120'], { stdio: 'ignore' });
  try {
    await new Promise((r) => other.once('spawn', r));
    fs.writeFileSync(lock, JSON.stringify({ pid: other.pid, started: '2024-05-01T10:00:00.000Z' }) + '\n');
    const r = toolrl([...RUN, '--out', dir]);
    const line = errorLine(r, 3);
    assert.ok(!/tfjs backend/.test(r.stderr + r.stdout), 'refused before any backend starts');
    for (const part of [`is in use by process ${other.pid}`, 'since 2024-05-01T10:00:00.000Z', 'that pid now runs: sleep 120',
      'it may not be a toolrl run', `ps -p ${other.pid}`, `remove ${lock}`]) assert.ok(line.includes(part), `names "${part}": ${line}`);
    assert.ok(fs.existsSync(lock), 'the lock is left for the user to judge');
  } finally {
    other.kill();
  }
});
