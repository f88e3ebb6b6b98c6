import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';

/** Every .ts file under lib/ with its relative imports. */
function libImports(): { file: string; imports: string[] }[] {
  const out: { file: string; imports: string[] }[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const src = fs.readFileSync(p, 'utf8');
        assert.ok(!/\bimport\.meta\b/.test(src), `${p} uses import.meta`);
        out.push({ file: p, imports: Array.from(src.matchAll(/from\s+['"](\.[^'"]*)['"]/g), (m) => m[1]) });
      }
    }
  };
  walk('lib');
  return out;
}

// tslab's module loader (notebooks import ./lib/...) does not resolve a folder import to its index.ts, and
// lib must run unchanged under tsx, node:test and tslab: every relative import names a file.
test('lib imports name files, never folders', () => {
  const bad: string[] = [];
  for (const { file, imports } of libImports()) {
    for (const imp of imports) {
      const target = path.resolve(path.dirname(file), imp);
      if (fs.existsSync(target) && fs.statSync(target).isDirectory()) bad.push(`${file}: ${imp}`);
    }
  }
  assert.deepEqual(bad, []);
});

// tslab's TypeScript crashes in declaration emit ("Cannot read properties of undefined (reading 'parent')") on a
// side-effect-only import of a local file (`import './x';`), which fails the first cell of every notebook that
// imports the file's importer. Packages (`import '@tensorflow/tfjs-backend-wasm'`) are fine.
test('lib never imports a local file for its side effects only', () => {
  const bad: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/^import\s+['"](\.[^'"]*)['"]/gm)) bad.push(`${p}: ${m[1]}`);
      }
    }
  };
  walk('lib');
  assert.deepEqual(bad, []);
});

// docs/design.md C: dependencies point one way. A file may import its own layer or a lower one. diagnostics is a
// library of instruments over a model (the probe, the gradient split) that the trainer uses: below train.
const LAYER: Record<string, number> = {
  '': 0, util: 0, format: 1, envs: 2, model: 2, diagnostics: 3, train: 4, bench: 5, experiments: 6, report: 7, cli: 8,
};
test('lib layers import downwards only (nothing in format, envs, model or train imports experiments, report or cli)', () => {
  const layerOf = (file: string) => {
    const rel = path.relative('lib', file).split(path.sep);
    return rel.length === 1 ? '' : rel[0];
  };
  const bad: string[] = [];
  for (const { file, imports } of libImports()) {
    const from = layerOf(file);
    for (const imp of imports) {
      const to = layerOf(path.relative('.', path.resolve(path.dirname(file), imp)));
      if (!(to in LAYER)) bad.push(`${file}: ${imp} (unknown layer ${to})`);
      else if (LAYER[to] > LAYER[from]) bad.push(`${file} (${from || 'lib'}) imports ${imp} (${to})`);
    }
  }
  assert.deepEqual(bad, []);
});

// No circles, type-only imports included: within a layer too, a file that imports another must not be imported
// back by it, directly or through others (a reader can then read every folder bottom-up).
test('lib has no import cycles', () => {
  const graph = new Map<string, string[]>();
  for (const { file, imports } of libImports()) {
    graph.set(path.normalize(file), imports.map((imp) => {
      const target = path.normalize(path.join(path.dirname(file), imp));
      return target.endsWith('.ts') ? target : `${target}.ts`;
    }));
  }
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, trail: string[]) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(node)), node].join(' -> '));
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) if (graph.has(next)) visit(next, [...trail, node]);
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) visit(node, []);
  assert.deepEqual(cycles, []);
});
