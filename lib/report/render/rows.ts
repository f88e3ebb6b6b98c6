// Tables as HTML (notebooks, report.html) or aligned text (terminals, logs).
//
// danfojs-node has no HTML output, so we read df.columns / df.values / df.index ourselves.
// We duck-type the DataFrame instead of importing danfojs: loading it pulls in TensorFlow.js,
// which a caller that only has plain rows should not pay for.

import { escapeHtml } from "../figures/plotly";

export type Row = Record<string, unknown>;

/** The part of a danfojs DataFrame we read. */
export interface DataFrameLike {
  columns: string[];
  values: unknown[];
  index?: unknown[];
}

export type TableInput = DataFrameLike | Row[];

export interface TableOptions {
  caption?: string;
  /** Decimals for non-integer numbers (default 3). */
  digits?: number;
  /**
   * Split a table wider than this many pixels (estimated from its text) into parts that each fit, every part
   * repeating the key columns; unset, never split (report.html scrolls instead).
   */
  maxWidth?: number;
  /** The leading columns that name a row, repeated in every part (default 1, or 2 when the second is "seed"). */
  keyColumns?: number;
}

/** About the width of the notebook's output area in a 1280-px JupyterLab window with the left area closed. */
export const OUTPUT_WIDTH_PX = 1100;

interface Grid {
  columns: string[];
  rows: unknown[][];
  numeric: boolean[];
}

export function isDataFrameLike(x: unknown): x is DataFrameLike {
  const o = x as DataFrameLike | null;
  return typeof o === "object" && o !== null && !Array.isArray(o) && Array.isArray(o.columns) &&
    Array.isArray(o.values);
}

/** Is this index just 0..n-1 (danfojs's default)? Then showing it adds nothing. */
function isDefaultIndex(index: unknown[]): boolean {
  return index.every((v, i) => v === i);
}

function toGrid(input: TableInput): Grid {
  let columns: string[];
  let rows: unknown[][];
  if (isDataFrameLike(input)) {
    columns = input.columns.map(String);
    // A one-column DataFrame can report values as a flat array; normalise to rows.
    rows = input.values.map((r) => (Array.isArray(r) ? r : [r]));
    if (input.index && input.index.length === rows.length && !isDefaultIndex(input.index)) {
      const index = input.index;
      columns = ["", ...columns];
      rows = rows.map((r, i) => [index[i], ...r]);
    }
  } else {
    // Union of keys in first-seen order, so ragged rows still line up.
    const seen = new Set<string>();
    for (const r of input) for (const k of Object.keys(r)) seen.add(k);
    columns = Array.from(seen);
    rows = input.map((r) => columns.map((c) => r[c]));
  }
  const numeric = columns.map((_, j) => rows.length > 0 && rows.every((r) => r[j] == null || typeof r[j] === "number"));
  return { columns, rows, numeric };
}

export function formatCell(v: unknown, digits = 3): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "number") {
    if (Number.isInteger(v) || !Number.isFinite(v)) return String(v);
    // a value that would print as 0.000 (a probe probability of 4e-5) is not zero: scientific notation says how small
    if (Math.abs(v) < 0.5 * 10 ** -digits) return v.toExponential(1);
    return v.toFixed(digits);
  }
  if (typeof v === "string") return v;
  if (typeof v === "boolean" || typeof v === "bigint") return String(v);
  return JSON.stringify(v) ?? String(v);
}

// One class + one <style> block: JupyterLab injects output HTML into the page, so the selectors
// are scoped to .toolrl-table to avoid restyling the rest of the notebook.
// Alignment is set inline on each cell (see tableHtml): JupyterLab and nbconvert right-align
// every output cell with `:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`, which outranks a
// class selector of ours, and an inline style beats any stylesheet rule.
const TABLE_CSS =
  "table.toolrl-table{border-collapse:collapse;font-size:13px;margin:.4em 0;font-family:system-ui,sans-serif}" +
  "table.toolrl-table caption{caption-side:top;text-align:left;font-weight:600;padding:.2em 0;white-space:nowrap}" +
  "table.toolrl-table th,table.toolrl-table td{padding:3px 10px;border:0;border-bottom:1px solid #e2e2e2}" +
  "table.toolrl-table th{background:#f4f4f4}" +
  "table.toolrl-table .num{font-variant-numeric:tabular-nums}" +
  "table.toolrl-table tbody tr:hover td{background:#f3f5ff}" +
  "div.toolrl-scroll{overflow-x:auto;max-width:100%;margin:.4em 0}";

/** Text cells longer than this wrap inside a bounded width instead of widening the table. */
const LONG_TEXT = 48;
const WRAP_STYLE = "text-align:left;max-width:36em;min-width:14em;white-space:normal;overflow-wrap:anywhere";

// An estimate of how wide the table draws (TABLE_CSS: 13 px system-ui, 10 px padding each side): enough to
// decide a split, not to lay out. Long text cells wrap at WRAP_STYLE's 36em, so they count that wide at most.
// Measured in headless Chromium on the committed report tables (test/browser.tables.test.ts): the drawn width is
// 0.97 to 1.11 times this estimate, and every split part fits the output area.
const CHAR_PX = 7.2;
const CELL_PAD_PX = 20;
const WRAP_PX = 36 * 13;

/** The estimated drawn width in pixels of `input` as one table (what a split decides on). */
export function estimateTableWidth(input: TableInput, digits = 3): number {
  return columnWidths(toGrid(input), digits).reduce((a, b) => a + b, 0);
}

function columnWidths(g: Grid, digits: number): number[] {
  return g.columns.map((c, j) => {
    const chars = Math.max(c.length, ...g.rows.map((r) => formatCell(r[j], digits).length));
    return Math.min(chars * CHAR_PX, WRAP_PX) + CELL_PAD_PX;
  });
}

/**
 * The grid cut into parts no wider than `maxWidth`, each with the key columns first: a per-seed table of fourteen
 * columns becomes two a projector shows whole, instead of one that scrolls its last columns out of sight. Columns
 * keep their order; one too wide on its own gets a part to itself.
 */
function splitGrid(g: Grid, maxWidth: number, keyColumns: number, digits = 3): Grid[] {
  const widths = columnWidths(g, digits);
  const keys = Math.min(keyColumns, g.columns.length);
  const keyWidth = widths.slice(0, keys).reduce((a, w) => a + w, 0);
  const total = widths.reduce((a, w) => a + w, 0);
  if (total <= maxWidth || g.columns.length <= keys + 1) return [g];
  // greedy: fill a part up to `limit`, then start the next
  const cut = (limit: number): number[][] => {
    const parts: number[][] = [[]];
    let width = keyWidth;
    for (let j = keys; j < g.columns.length; j++) {
      if (parts[parts.length - 1].length && width + widths[j] > limit) {
        parts.push([]);
        width = keyWidth;
      }
      parts[parts.length - 1].push(j);
      width += widths[j];
    }
    return parts;
  };
  // as few parts as the width allows, then as even as they can be (not a full part and one of a single column)
  const fewest = cut(maxWidth).length;
  let limit = keyWidth + (total - keyWidth) / fewest;
  while (limit < maxWidth && cut(limit).length > fewest) limit += 10;
  const parts = cut(Math.min(limit, maxWidth));
  const keyIdx = [...Array(keys).keys()];
  return parts.map((idx) => {
    const cols = [...keyIdx, ...idx];
    return { columns: cols.map((j) => g.columns[j]), rows: g.rows.map((r) => cols.map((j) => r[j])),
      numeric: cols.map((j) => g.numeric[j]) };
  });
}

/**
 * The table as HTML inside a horizontally scrolling container: a table wider than the output area scrolls there
 * instead of being cut off, and long text cells (JSON settings, evidence) wrap within a bounded width. With
 * `maxWidth`, a wider table is drawn as parts that fit (`splitGrid`), captioned "(1 of 2)", "(2 of 2)".
 */
export function tableHtml(input: TableInput, opts: TableOptions = {}): string {
  const grid = toGrid(input);
  const digits = opts.digits ?? 3;
  if (opts.maxWidth === undefined) return gridHtml(grid, digits, opts.caption);
  const keys = opts.keyColumns ?? (grid.columns[1] === "seed" ? 2 : 1);
  const parts = splitGrid(grid, opts.maxWidth, keys, digits);
  return parts.map((g, i) => gridHtml(g, digits, parts.length === 1 ? opts.caption
    : `${opts.caption ?? "table"} (${i + 1} of ${parts.length})`)).join("\n");
}

function gridHtml({ columns, rows, numeric }: Grid, digits: number, captionText?: string): string {
  // short cells never wrap ("29.0 [24.7, 33.2]" is one value); only long text wraps, within WRAP_STYLE's width
  const attrs = numeric.map((n) => (n ? ' class="num" style="text-align:right;white-space:nowrap"'
    : ' style="text-align:left;white-space:nowrap"'));
  const head = columns.map((c, j) => `<th${attrs[j]}>${escapeHtml(c)}</th>`).join("");
  const cell = (v: unknown, j: number) => {
    const text = formatCell(v, digits);
    const style = !numeric[j] && text.length > LONG_TEXT ? ` style="${WRAP_STYLE}"` : attrs[j];
    return `<td${style}>${escapeHtml(text)}</td>`;
  };
  const body = rows.map((r) => `<tr>${r.map(cell).join("")}</tr>`).join("\n");
  const caption = captionText ? `<caption>${escapeHtml(captionText)}</caption>` : "";
  return `<style>${TABLE_CSS}</style>\n<div class="toolrl-scroll"><table ` +
    `class="toolrl-table">${caption}\n<thead><tr>${head}</tr></thead>\n` +
    `<tbody>\n${body}\n</tbody></table></div>`;
}

/** The same table as aligned monospace text (the fallback outside a notebook). */
export function tableText(input: TableInput, opts: TableOptions = {}): string {
  const { columns, rows, numeric } = toGrid(input);
  const digits = opts.digits ?? 3;
  const cells = rows.map((r) => r.map((v) => formatCell(v, digits)));
  const widths = columns.map((c, j) => Math.max(c.length, ...cells.map((r) => r[j].length)));
  const pad = (s: string, j: number) => (numeric[j] ? s.padStart(widths[j]) : s.padEnd(widths[j]));
  const lines = [columns.map(pad).join("  "), widths.map((w) => "-".repeat(w)).join("  "),
    ...cells.map((r) => r.map(pad).join("  "))];
  if (opts.caption) lines.unshift(opts.caption);
  return lines.join("\n");
}

/** The parts of a report table that `fitColumns` reads and returns. */
export interface ColumnsTable {
  columns: string[];
  rows: string[][];
  notes: string[];
}

const EMPTY_CELLS = new Set(['', '—', '-', 'n/a']);

/**
 * A table that fits the output area: a value column that says nothing (empty or "—" in every row) or the same in
 * every row of two or more is left out, and a note below the table says which and what it held, so nothing is
 * lost. The first column (the row's name) always stays. Returns a new table; the input is not changed.
 */
export function fitColumns<T extends ColumnsTable>(t: T): T {
  if (t.rows.length === 0) return t;
  const empty: string[] = [];
  const constant: string[] = [];
  const keep = t.columns.map((c, j) => {
    if (j === 0) return true;
    const cells = t.rows.map((r) => (r[j] ?? '').trim());
    if (cells.every((v) => EMPTY_CELLS.has(v))) {
      empty.push(c);
      return false;
    }
    if (t.rows.length >= 2 && cells.every((v) => v === cells[0])) {
      constant.push(`${c} = ${cells[0]}`);
      return false;
    }
    return true;
  });
  if (keep.every(Boolean)) return t;
  const notes = [...t.notes];
  if (empty.length) notes.push(`Not shown, empty in every row: ${empty.join('; ')}.`);
  if (constant.length) notes.push(`Not shown, the same in every row: ${constant.join('; ')}.`);
  return { ...t, columns: t.columns.filter((_, j) => keep[j]), rows: t.rows.map((r) => r.filter((_, j) => keep[j])),
    notes };
}
