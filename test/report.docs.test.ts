// docs/results.md and the README's results block are written by `toolrl report --docs` from the committed stores,
// never by hand: this fails when either differs from what the report writes now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { loadPipelineStore, loadRegimeStores, readmeBlock, resultsMarkdown, withReadmeBlock, RESULTS_BEGIN, RESULTS_END }
  from '../lib/report/docs';

test('docs/results.md and the README results block are what `npx toolrl report --docs` writes', () => {
  const stores = loadRegimeStores('data/results');
  const hint = 'run `npm run report` (npx toolrl report --docs) and commit docs/results.md and README.md';
  assert.equal(fs.readFileSync('docs/results.md', 'utf8'), resultsMarkdown(stores, loadPipelineStore('data/results')), `docs/results.md is stale: ${hint}`);
  const readme = fs.readFileSync('README.md', 'utf8');
  assert.equal(readme, withReadmeBlock(readme, readmeBlock(stores)), `the README's results block is stale: ${hint}`);
});

test('the README block is replaced between its markers only, and missing markers are an error', () => {
  const text = `top\n${RESULTS_BEGIN}\nold\n${RESULTS_END}\nbottom\n`;
  assert.equal(withReadmeBlock(text, `${RESULTS_BEGIN}\nnew\n${RESULTS_END}`), `top\n${RESULTS_BEGIN}\nnew\n${RESULTS_END}\nbottom\n`);
  assert.throws(() => withReadmeBlock('no markers', 'x'), /no results block/);
});
