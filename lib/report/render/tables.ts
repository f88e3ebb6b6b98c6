/**
 * One ReportTable, four renderings: CSV (spreadsheets), GitHub Markdown (README), HTML (report.html and
 * notebooks, via table.ts) and aligned text (the terminal). Plus a danfojs DataFrame of the display cells
 * for notebooks that want to keep working with the table.
 *
 * CSV is written here rather than with danfojs's toCSV: danfojs does not quote fields, and cells such as
 * "35, none" (collapse steps of two seeds) contain commas, which would shift every column after them.
 */
import * as dfd from 'danfojs-node';
import { ReportTable } from '../tables/base';
import { fitColumns, tableHtml, tableText, Row } from './rows';
import { escapeHtml } from '../figures/plotly';

function asRows(t: ReportTable): Row[] {
  return t.rows.map((r) => Object.fromEntries(t.columns.map((c, j) => [c, r[j]])));
}

/** RFC 4180: quote a field holding a comma, quote or newline; double the quotes inside. */
function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCSV(t: ReportTable): string {
  return [t.columns, ...t.rows].map((r) => r.map(csvField).join(',')).join('\n') + '\n';
}

/**
 * A Markdown table cell: pipes escaped, one line, and `<` as an entity (GitHub would take `<tool_call>` for an HTML
 * tag).
 */
export function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ').replace(/</g, '&lt;');
}

/** A GitHub table under a bold title; value columns right-aligned; notes as a list below. */
export function toMarkdown(t: ReportTable): string {
  const align = t.columns.map((_, j) => (j === 0 ? ':---' : '---:'));
  const lines = [
    `**${t.title}**`,
    '',
    `| ${t.columns.map(mdCell).join(' | ')} |`,
    `| ${align.join(' | ')} |`,
    ...t.rows.map((r) => `| ${r.map(mdCell).join(' | ')} |`),
  ];
  if (t.notes.length) lines.push('', ...t.notes.map((n) => `- ${n.replace(/</g, '&lt;')}`));
  return lines.join('\n') + '\n';
}

/** The table as HTML for report.html, fitted as in the notebooks (rows.ts fitColumns). */
export function toHtml(table: ReportTable): string {
  const t = fitColumns(table);
  const notes = t.notes.length
    ? `\n<ul style="font-size:12px;color:#555">${t.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>`
    : '';
  return tableHtml(asRows(t), { caption: t.title }) + notes;
}

/** Aligned text with the title on top (notes left out: the terminal shows the tables, the report explains). */
export function toText(t: ReportTable): string {
  if (!t.rows.length) return `${t.title}\n(no finished runs)`;
  return tableText(asRows(t), { caption: t.title });
}

/** The display cells as a danfojs DataFrame (e.g. for showTable in a notebook). */
export function toFrame(t: ReportTable): dfd.DataFrame {
  return new dfd.DataFrame(t.rows, { columns: t.columns });
}

/** The table as JSON for summary.json: display cells and the statistics behind them. */
export function toJSON(t: ReportTable): Record<string, unknown> {
  return { title: t.title, columns: t.columns, rows: t.rows, raw: t.raw, notes: t.notes };
}
