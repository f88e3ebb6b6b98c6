/**
 * The paper's two tables from the results store: Table 1 (ID accuracy per category and their average, one row per
 * method, as the paper's main table) and Table 2 (format-OOD, content-OOD and format+content-OOD averages: does a
 * gain survive a new syntax or new APIs?), each with intervals, paired differences and the paper's own numbers.
 */
import { ResultsStore, byGroup } from '../store/results';
import { PAPER_NOTES, PAPER_ROWS, paperIdCell, paperOodCell } from '../paper';
import { BY_LABEL, BASELINE_CONFIG, Extract, ID_COLUMNS, INTERVAL_NOTE, NA, OOD_COLUMNS, ReportTable, idAverage,
  insertColumnAfter, insertIntervalColumns, makeTable } from './base';

/** Table 1: ID accuracy per category and average, with intervals, paired differences and the paper's row. */
export function accuracyTable(store: ResultsStore): ReportTable {
  const extract: Record<string, Extract> = {};
  for (const c of ID_COLUMNS) extract[c] = (_e, s) => s.summary.eval.id?.perCategory[c]?.accuracy;
  extract.average = (_e, s) => idAverage(s.summary);
  const exps = byGroup(store, 'method');
  const t = makeTable('table1-id', 'Table 1: in-distribution accuracy (%)', exps, [...ID_COLUMNS, 'average'],
    extract, BY_LABEL, ['average = mean of the four category accuracies, as in the paper.', PAPER_NOTES.table1]);
  // inserted right after 'average', last first: average | paper | ID [95% CI] | ID − base | average − vanilla RL
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'average', 'average', BASELINE_CONFIG, 'vanilla RL', false);
  insertIntervalColumns(t, exps, store, 'id', ID_COLUMNS, 'ID', 'average', 'base-model', 'base');
  insertColumnAfter(t, 'paper', 'average', (c) => paperIdCell(c) || NA, (c) => PAPER_ROWS[c]?.average ?? null);
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}

/** Table 2: averages on format-OOD, content-OOD and format+content-OOD, with the paper's two ACEBench columns. */
export function oodTable(store: ResultsStore): ReportTable {
  const exps = byGroup(store, 'method');
  const t = makeTable('table2-ood', 'Table 2: out-of-distribution accuracy (%)', exps,
    ['ID average', 'format-OOD average', 'content-OOD average', 'format+content-OOD average'], {
      'ID average': (_e, s) => idAverage(s.summary),
      'format-OOD average': (_e, s) => s.summary.eval.format_ood?.mean,
      'content-OOD average': (_e, s) => s.summary.eval.content_ood?.mean,
      'format+content-OOD average': (_e, s) => s.summary.eval.format_content_ood?.mean,
    }, BY_LABEL, [PAPER_NOTES.table2, 'format-OOD = the ID test tasks (but long_context) in the python-list syntax; ' +
      'content-OOD = a held-out API family; OOD averages are the mean of that split\'s category accuracies; ' +
      '— where a run predates the format+content-OOD split.']);
  insertIntervalColumns(t, exps, store, 'format_content_ood', OOD_COLUMNS, 'format+content-OOD',
    'format+content-OOD average', 'base-model', 'base');
  insertIntervalColumns(t, exps, store, 'content_ood', OOD_COLUMNS, 'content-OOD', 'content-OOD average', 'base-model',
    'base');
  insertIntervalColumns(t, exps, store, 'format_ood', OOD_COLUMNS, 'format-OOD', 'format-OOD average', 'base-model',
    'base');
  // each paper column beside the lab's average it compares to (ACEBench's two columns; the paper has no format-OOD)
  insertColumnAfter(t, 'paper content-OOD', 'content-OOD average', (c) => paperOodCell(c, 'contentOod') || NA,
    (c) => PAPER_ROWS[c]?.contentOod ?? null);
  insertColumnAfter(t, 'paper format+content-OOD', 'format+content-OOD average',
    (c) => paperOodCell(c, 'formatContentOod') || NA, (c) => PAPER_ROWS[c]?.formatContentOod ?? null);
  if (t.raw.length) t.notes.splice(1, 0, INTERVAL_NOTE);
  return t;
}
