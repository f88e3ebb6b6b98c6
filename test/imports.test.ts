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

// docs/design.md C: dependencies point one way. A file may import its own layer or a lower one; train and
// diagnostics use each other (the trainer logs the probe, calibration runs rollouts).
const LAYER: Record<string, number> = {
  '': 0, util: 0, format: 1, envs: 2, model: 2, train: 3, diagnostics: 3, bench: 4, experiments: 5, report: 6, cli: 7,
};
test('lib layers import downwards only (nothing in format, envs, model or train imports experiments, report or cli)', () => {
  const layerOf = (file: string) => {
    const rel = path.relative('lib', file).split(path.sep);
    return rel.length === 1 ? '' : rel[0];
  };
  const bad: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const from = layerOf(p);
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/from\s+['"](\.[^'"]*)['"]/g)) {
          const to = layerOf(path.relative('.', path.resolve(path.dirname(p), m[1])));
          if (!(to in LAYER)) bad.push(`${p}: ${m[1]} (unknown layer ${to})`);
          else if (LAYER[to] > LAYER[from]) bad.push(`${p} (${from || 'lib'}) imports ${m[1]} (${to})`);
        }
      }
    }
  };
  walk('lib');
  assert.deepEqual(bad, []);
});
