// The markdown cells every results notebook repeats come from one source (lib/report/notebook/cells.ts): each
// notebook's copy must be what `npm run notebooks` writes, and what its RETRAIN cell names must be trainable.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CellLike, RETRAIN_HEADING, SETUP_HEADING, expectedCells, retrainConfigs, retrainMarkdown } from '../lib/report/notebook/cells';
import { getExperiment } from '../lib/experiments/registry/configs';

const DIR = path.resolve(__dirname, '..', 'notebooks');
const notebooks = fs.readdirSync(DIR).filter((f) => f.endsWith('.ipynb')).sort();
const read = (name: string) => (JSON.parse(fs.readFileSync(path.join(DIR, name), 'utf8')) as { cells: CellLike[] }).cells;
const text = (c: CellLike) => (Array.isArray(c.source) ? c.source.join('') : c.source);

test('every generated Setup and RETRAIN cell is what `npm run notebooks` writes', () => {
  const stale: string[] = [];
  for (const name of notebooks) {
    const cells = read(name);
    for (const [i, want] of expectedCells(name, cells)) if (text(cells[i]) !== want) stale.push(`${name} cell ${i}`);
  }
  assert.deepEqual(stale, [], 'run `npm run notebooks` and commit the notebooks');
});

test('a notebook that reads a store or retrains has the generated cell, and retrains only registered configs', () => {
  for (const name of notebooks) {
    const cells = read(name);
    const code = cells.filter((c) => c.cell_type === 'code').map(text).join('\n');
    const headings = cells.filter((c) => c.cell_type === 'markdown').map((c) => text(c).split('\n')[0]);
    if (code.includes('pickResultsPreset(')) assert.ok(headings.includes(SETUP_HEADING), `${name}: no "${SETUP_HEADING}" cell`);
    const configs = retrainConfigs(code);
    if (configs === null) continue;
    assert.ok(headings.includes(RETRAIN_HEADING), `${name}: retrainCell without a "${RETRAIN_HEADING}" cell`);
    assert.ok(configs.length > 0, `${name}: retrainCell([]) trains nothing`);
    for (const c of configs) assert.doesNotThrow(() => getExperiment(c), `${name}: retrains "${c}", which the registry lacks`);
  }
});

test('retrainConfigs reads the call; the RETRAIN text names exactly those configs', () => {
  assert.deepEqual(retrainConfigs('const r = await retrainCell(["fcl-sft", "fcl-sft-rl"]);'), ['fcl-sft', 'fcl-sft-rl']);
  assert.equal(retrainConfigs('no call here'), null);
  const md = retrainMarkdown(['fcl-sft', 'fcl-sft-rl'], 'A note.');
  assert.match(md, /runs `fcl-sft`, `fcl-sft-rl` at the preset/);
  assert.ok(md.endsWith('notebook 01). A note.'));
});
