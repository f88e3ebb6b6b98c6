// The library reads like cleanrl: no line of lib/ is longer than 120 characters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const LIMIT = 120;

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test(`no line of lib/ is longer than ${LIMIT} characters`, () => {
  const long: string[] = [];
  for (const f of tsFiles('lib')) {
    fs.readFileSync(f, 'utf8').split('\n').forEach((l, i) => {
      if ([...l].length > LIMIT) long.push(`${f}:${i + 1} (${[...l].length})`);
    });
  }
  assert.deepEqual(long, [], `lines over ${LIMIT} characters:\n${long.join('\n')}`);
});
