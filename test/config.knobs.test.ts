// docs/knobs.md is generated from the config declarations (lib/experiments/run/knobs.ts): this fails when the
// committed page differs from what `npx toolrl report --docs` writes now, and checks that the page has a row for
// every declared field with the doc comment of its declaring file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { declarationSources, knobsMarkdown } from '../lib/experiments/run/knobs';
import { CONFIGS } from '../lib/experiments/run/overrides';

test('docs/knobs.md is what `npx toolrl report --docs` writes', () => {
  assert.equal(fs.readFileSync('docs/knobs.md', 'utf8'), knobsMarkdown('.'),
    'docs/knobs.md is stale: run `npm run report` (npx toolrl report --docs) and commit it');
});

test('every declared field has a row, and every row its doc comment', () => {
  const page = knobsMarkdown('.');
  const sources = declarationSources('lib', '.');
  for (const decl of CONFIGS) {
    const src = sources.get(decl.prefix);
    assert.ok(src, `${decl.prefix}: no declareConfig call found under lib/`);
    for (const key of Object.keys(decl.fields)) {
      assert.ok(src.docs[key], `${decl.prefix}.${key} has no doc comment in ${src.file}`);
      assert.ok(page.includes(`| \`${decl.prefix}.${key}\` |`), `${decl.prefix}.${key}: no row`);
    }
  }
});

test('the doc comments are read from the source: a changed comment changes the page', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolrl-knobs-'));
  fs.cpSync('lib', path.join(root, 'lib'), { recursive: true });
  fs.mkdirSync(path.join(root, 'docs'));
  const file = path.join(root, 'lib', 'train', 'grpo', 'config.ts');
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.includes('/** Rollouts per prompt. Paper: 8 (rollout.n). */'));
  fs.writeFileSync(file, text.replace('/** Rollouts per prompt. Paper: 8 (rollout.n). */', '/** Changed | here. */'));
  assert.match(declarationSources(path.join(root, 'lib'), root).get('grpo')!.docs.groupSize, /^Changed \| here\.$/);
  assert.ok(knobsMarkdown(root).includes('| `grpo.groupSize` | 8 | integer in [1, 64] rollouts | Changed \\| here. |'));
  fs.rmSync(root, { recursive: true, force: true });
});
