import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';

// tslab's module loader (notebooks import ./lib/...) does not resolve a folder import to its index.ts, and
// lib must run unchanged under tsx, node:test and tslab: every relative import names a file.
test('lib imports name files, never folders', () => {
  const bad: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const src = fs.readFileSync(p, 'utf8');
        for (const m of src.matchAll(/from\s+'(\.[^']*)'/g)) {
          const target = path.resolve(path.dirname(p), m[1]);
          if (fs.existsSync(target) && fs.statSync(target).isDirectory()) bad.push(`${p}: ${m[1]}`);
        }
        assert.ok(!/\bimport\.meta\b/.test(src), `${p} uses import.meta`);
      }
    }
  };
  walk('lib');
  assert.deepEqual(bad, []);
});
