// The library reads like cleanrl: no line of lib/ is longer than 120 characters, and no string is broken to get there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

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

// A line break inside a template literal is part of the string: wrapping a long line there changes what the code
// prints (a status line split in two). Only a literal that is meant to span lines (a script, listed here) may.
const MULTILINE_TEMPLATES = new Set(['lib/report/figures/png.ts']);

test('no template literal in lib/ spans lines, except the scripts meant to', () => {
  const found: string[] = [];
  for (const f of tsFiles('lib')) {
    const rel = f.split(path.sep).join('/');
    const text = fs.readFileSync(f, 'utf8');
    const sf = ts.createSourceFile(f, text, ts.ScriptTarget.ES2020, true);
    const visit = (n: ts.Node) => {
      const part = ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) ||
        ts.isTemplateTail(n);
      if (part && text.slice(n.getStart(sf), n.getEnd()).includes('\n') && !MULTILINE_TEMPLATES.has(rel)) {
        found.push(`${rel}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  assert.deepEqual(found, [], `template literals with a line break inside:\n${found.join('\n')}`);
});
