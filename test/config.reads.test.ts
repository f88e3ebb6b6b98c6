// Every config knob is wired: each declared field (lib/util/fields.ts declarations, listed in
// lib/experiments/run/overrides.ts CONFIGS) is read somewhere in lib/ besides the files that only declare, check or
// document fields. A knob that `--set` accepts and nothing reads (grpo.valTasksPerCategory once was one) fails here.
// The read is found with the TypeScript parser: `cfg.key`, `cfg['key']`, or `{ key } = cfg` / `{ key: k } = cfg`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as ts from 'typescript';
import { CONFIGS } from '../lib/experiments/run/overrides';

/** Files that handle every field generically: reading a key there is not using the knob. */
const GENERIC = ['lib/util/fields.ts', 'lib/experiments/run/overrides.ts', 'lib/experiments/run/knobs.ts'];

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** How often each property name is read in `files` (property access, string element access, destructuring). */
function propertyReads(files: string[]): Map<string, string[]> {
  const reads = new Map<string, string[]>();
  const add = (name: string, file: string) => reads.set(name, [...(reads.get(name) ?? []), file]);
  for (const file of files) {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2020, true);
    const visit = (n: ts.Node) => {
      if (ts.isPropertyAccessExpression(n)) add(n.name.text, file);
      else if (ts.isElementAccessExpression(n) && ts.isStringLiteral(n.argumentExpression)) add(n.argumentExpression.text, file);
      else if (ts.isBindingElement(n) && ts.isObjectBindingPattern(n.parent)) {
        const key = n.propertyName ?? n.name;
        if (ts.isIdentifier(key)) add(key.text, file);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return reads;
}

test('every declared config field is read by the code that runs', () => {
  const files = tsFiles('lib').filter((f) => !GENERIC.includes(f.split(path.sep).join('/')));
  const reads = propertyReads(files);
  assert.equal(reads.get('aFieldNothingReads'), undefined, 'the reader finds names that are not there');
  const unread: string[] = [];
  for (const decl of CONFIGS) {
    for (const key of Object.keys(decl.fields)) if (!reads.has(key)) unread.push(`${decl.prefix}.${key}`);
  }
  assert.deepEqual(unread, [], `declared, accepted by --set, and read by nothing: ${unread.join(', ')}`);
});

test('the reader sees each kind of read, and not a declaration', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-reads-'));
  const file = path.join(dir, 'x.ts');
  fs.writeFileSync(file, 'const F = { declared: 1 };\nconst a = cfg.viaDot; const b = cfg["viaIndex"];\n' +
    'const { viaPattern, other: renamed } = cfg;\n');
  const reads = propertyReads([file]);
  for (const k of ['viaDot', 'viaIndex', 'viaPattern', 'other']) assert.ok(reads.has(k), k);
  assert.ok(!reads.has('declared') && !reads.has('renamed'));
  fs.rmSync(dir, { recursive: true, force: true });
});
