/**
 * docs/knobs.md: every `--set` knob in one table per config, generated from the declarations (lib/util/fields.ts)
 * so that it cannot drift from them. The kind, default, range and unit come from the Field objects; the meaning and
 * the paper reference come from the doc comment above each field in its declaring file, read with the TypeScript
 * parser (the comments stay where an editor shows them; nothing is written twice). `npx toolrl report --docs`
 * rewrites the file, and test/config.knobs.test.ts fails when the committed one differs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { Field, rangeText } from '../../util/fields';
import { CONFIGS } from './overrides';

/** One declaration found in a source file: `declareConfig('<prefix>', <FIELDS>)` and the doc comment of each field. */
interface DeclSource {
  file: string;
  docs: Record<string, string>;
}

/** The JSDoc text of a node, whitespace collapsed ('' when it has none). */
function docOf(node: ts.Node, sf: ts.SourceFile): string {
  const ranges = ts.getLeadingCommentRanges(sf.text, node.getFullStart()) ?? [];
  const jsdoc = ranges.map((r) => sf.text.slice(r.pos, r.end)).filter((c) => c.startsWith('/**')).pop();
  if (!jsdoc) return '';
  return jsdoc.replace(/^\/\*\*|\*\/$/g, '').split('\n').map((l) => l.replace(/^\s*\* ?/, '')).join(' ')
    .replace(/\s+/g, ' ').trim();
}

/** Every `declareConfig` call under `dir`, by prefix, with the doc comments of its fields object. */
export function declarationSources(dir: string, root: string): Map<string, DeclSource> {
  const out = new Map<string, DeclSource>();
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) files.push(p);
    }
  };
  walk(dir);
  for (const file of files.sort()) {
    const text = fs.readFileSync(file, 'utf8');
    if (!text.includes('declareConfig(')) continue;
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2020, true);
    const objects = new Map<string, ts.ObjectLiteralExpression>();
    const calls: [string, string][] = [];
    const visit = (n: ts.Node) => {
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer &&
        ts.isObjectLiteralExpression(n.initializer)) {
        objects.set(n.name.text, n.initializer);
      }
      if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'declareConfig') {
        const [prefix, fields] = n.arguments;
        if (prefix && ts.isStringLiteral(prefix) && fields &&
          ts.isIdentifier(fields)) calls.push([prefix.text, fields.text]);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
    for (const [prefix, name] of calls) {
      const obj = objects.get(name);
      if (!obj) continue;
      const docs: Record<string, string> = {};
      for (const p of obj.properties) {
        if (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name))) docs[p.name.text] = docOf(p, sf);
      }
      out.set(prefix, { file: path.relative(root, file).split(path.sep).join('/'), docs });
    }
  }
  return out;
}

const cell = (s: string) => s.replace(/\|/g, '\\|');
const shown = (v: unknown) => (typeof v === 'number' && Math.abs(v) >= 1e5 && Number.isInteger(v) ?
  v.toExponential() : String(v));

function rangeCell(f: Field<unknown>): string {
  const r = rangeText(f).replace(/^an? /, '');
  return f.unit ? `${r} ${f.unit}` : r;
}

/** docs/knobs.md under the repository `root`. */
export function knobsMarkdown(root: string): string {
  const sources = declarationSources(path.join(root, 'lib'), root);
  const lines = [
    '# Knobs',
    '',
    'Every field that `npx toolrl run --set prefix.key=value` (and the notebooks\' `retrain` cells) can change, ' +
      'with its',
    'default and the range a value must lie in: outside it the run is refused with exit 2 before anything starts.',
    'A default cites the paper or its code where it comes from them ("Paper: ..."); "ours" marks a choice of this',
    'project, with its reason. Generated from the declarations by `npx toolrl report --docs`: edit the doc comment',
    'in the declaring file, not this page. An unprefixed key (`lr=3e-4`) sets the field in every SFT and GRPO config',
    'that has it.',
    '',
  ];
  for (const decl of CONFIGS) {
    const src = sources.get(decl.prefix);
    lines.push(`## ${decl.prefix}.`, '', src ? `Declared in [${src.file}](../${src.file}).` : '', '',
      '| key | default | range | meaning |', '|---|---|---|---|');
    for (const [key, f] of Object.entries(decl.fields)) {
      const doc = src?.docs[key] ?? '';
      lines.push(`| \`${decl.prefix}.${key}\` | ${shown(f.default)} | ${cell(rangeCell(f))} | ${cell(doc)} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** Write docs/knobs.md; returns its path. */
export function writeKnobs(root: string): string {
  const file = path.join(root, 'docs', 'knobs.md');
  fs.writeFileSync(file, knobsMarkdown(root));
  return file;
}
