// `npm run notebooks`: write the generated markdown cells (lib/report/notebook/cells.ts) into notebooks/*.ipynb.
// `--check` only lists the notebooks whose cells differ and exits 1 if any do (test/notebooks.cells.test.ts does the same).
import * as fs from 'fs';
import * as path from 'path';
import { expectedCells, toSource, CellLike } from '../lib/report/notebook/cells';

const dir = path.resolve(__dirname, '..', 'notebooks');
const check = process.argv.includes('--check');
let stale = 0;
for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.ipynb')).sort()) {
  const file = path.join(dir, name);
  const nb = JSON.parse(fs.readFileSync(file, 'utf8')) as { cells: CellLike[] };
  const changed: number[] = [];
  for (const [i, want] of expectedCells(name, nb.cells)) {
    const have = Array.isArray(nb.cells[i].source) ? (nb.cells[i].source as string[]).join('') : nb.cells[i].source;
    if (have === want) continue;
    changed.push(i);
    nb.cells[i].source = toSource(want);
  }
  if (!changed.length) continue;
  stale++;
  console.log(`${check ? 'differs' : 'updated'}: notebooks/${name} (cell${changed.length > 1 ? 's' : ''} ${changed.join(', ')})`);
  if (!check) fs.writeFileSync(file, JSON.stringify(nb, null, 1) + '\n');
}
if (!stale) console.log('notebooks: every generated cell is up to date');
if (check && stale) process.exit(1);
