// Plotly figure specs and the HTML that draws them.
//
// A figure is plain JSON ({data, layout}), so the same spec can be shown inline in a notebook
// (lib/report/notebook/display.ts) and written into the CLI's report.html (writeHtmlReport below).
// Nothing here needs a browser: we only build strings; plotly itself runs in the page.

import * as fs from "node:fs";
import * as path from "node:path";
import { withFallbacks } from "./palette";

/** A plotly figure: traces plus layout, exactly what `Plotly.newPlot(el, data, layout)` takes. */
export interface PlotlyFigure {
  data: Record<string, unknown>[];
  layout: Record<string, unknown>;
}

export interface LineSeries {
  name: string;
  y: number[];
  /** Optional per-series x; defaults to the figure's shared x. */
  x?: number[];
  /** Its colour by meaning (palette.ts); without one it takes the figure's next free colour. */
  color?: string;
  dash?: string;
}

export interface LineFigureSpec {
  title: string;
  x: number[];
  series: LineSeries[];
  xTitle?: string;
  yTitle?: string;
}

/** `#rrggbb` as `rgba(r,g,b,alpha)` (the fill of a band in the series' own colour). */
export function withAlpha(hex: string, alpha: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255},${(n >> 8) & 255},${n & 255},${alpha})`;
}

/**
 * The legend sits outside the plot, right of it, top-aligned: it can never cover a curve or the x axis title
 * (a legend below the plot lands on the x title once it wraps to two rows). A figure with a second y axis on
 * the right pushes it further out (`legendBeside(fig, true)`).
 */
export function legendBeside(fig: PlotlyFigure, secondAxis = false): PlotlyFigure {
  fig.layout.legend = { orientation: "v", x: secondAxis ? 1.12 : 1.02, xanchor: "left", y: 1, yanchor: "top",
    font: { size: 11 } };
  return fig;
}

/**
 * Lines over a shared x axis (training curves, sweeps), coloured by meaning (palette.ts).
 * Titles use the `{text}` object form: plotly 3 silently ignores a bare string title.
 */
export function lineFigure(spec: LineFigureSpec): PlotlyFigure {
  const styles = withFallbacks(spec.series.map((s) => s.color));
  const data = spec.series.map((s, i) => {
    const color = styles[i].color;
    const dash = s.dash ?? styles[i].dash;
    return { type: "scatter", mode: "lines", name: s.name, x: s.x ?? spec.x, y: s.y, line: { color, dash },
      marker: { color } };
  });
  const layout: Record<string, unknown> = {
    title: { text: spec.title },
    xaxis: { title: { text: spec.xTitle ?? "" }, zeroline: false },
    yaxis: { title: { text: spec.yTitle ?? "" }, zeroline: false },
    margin: { l: 60, r: 20, t: 50, b: 50 },
    height: 380,
  };
  return legendBeside({ data, layout });
}

// ---- the plotly bundle ------------------------------------------------------------------

const BUNDLE_REL = path.join("node_modules", "plotly.js-dist-min", "plotly.min.js");

/**
 * Absolute path of plotly.min.js. We walk up from this file like Node's resolver does
 * (instead of require.resolve) so this works under tsx, under tslab (which compiles lib/ itself)
 * and when npm hoists the dependency above the package.
 */
export function plotlyBundlePath(): string {
  const tried: string[] = [];
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, BUNDLE_REL);
    tried.push(candidate);
    if (fs.existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) break;
  }
  throw new Error(`plotly bundle not found; looked for:\n  ${tried.join("\n  ")}\n(is plotly.js-dist-min installed?)`);
}

let bundleText: string | undefined;

/**
 * `<script>` tag carrying the whole plotly bundle (~4.8 MB): include it ONCE per page.
 * The bundle's UMD wrapper ends with `window.Plotly = Plotly`, so later scripts find it there.
 */
export function plotlyBundleScript(): string {
  if (bundleText === undefined) {
    // `</script` inside the text would end the tag early; `<\/script` means the same in JS
    // strings, regexes and comments. (The 3.x bundle has none today; this keeps it safe.)
    bundleText = fs.readFileSync(plotlyBundlePath(), "utf8").replace(/<\/script/gi, "<\\/script");
  }
  return `<script type="text/javascript">${bundleText}</script>`;
}

// ---- one figure as HTML -----------------------------------------------------------------

let plotCounter = 0;

/** JSON that is safe to paste inside <script>: `<` becomes \u003c so no `</script>` can appear. */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/**
 * A `<div>` plus a small script that draws `fig` into it.
 *
 * The script polls for the element and for `window.Plotly` instead of calling newPlot at once:
 * JupyterLab may run an output's scripts before the output is attached, and in a notebook the
 * bundle arrives in an earlier output (display.ts inlines it once per kernel session). If plotly
 * never shows up (e.g. the output holding the bundle was cleared and the page reloaded), the div
 * says so instead of staying blank.
 */
export function plotDivHtml(fig: PlotlyFigure, opts: { height?: number } = {}): string {
  plotCounter += 1;
  const id = `toolrl-plot-${Date.now().toString(36)}-${plotCounter}`;
  const layoutHeight = typeof fig.layout.height === "number" ? fig.layout.height : undefined;
  const height = opts.height ?? layoutHeight ?? 380;
  const config = { responsive: true, displaylogo: false };
  return (
    `<div id="${id}" class="toolrl-plot" style="width:100%;max-width:960px;height:${height}px"></div>\n` +
    `<script type="text/javascript">(function () {\n` +
    `  var fig = ${scriptSafeJson(fig)}, config = ${scriptSafeJson(config)}, tries = 0;\n` +
    `  function draw() {\n` +
    `    var el = document.getElementById(${scriptSafeJson(id)});\n` +
    `    if (el && window.Plotly) { window.Plotly.newPlot(el, fig.data, fig.layout, config); return; }\n` +
    `    if (++tries < 300) { setTimeout(draw, 100); return; }\n` +
    `    if (el) el.textContent = "plotly is not loaded on this page: re-run the notebook from the top " +\n` +
    `      "(or call reloadPlotly() from lib/report/display) and run this cell again.";\n` +
    `  }\n` +
    `  draw();\n` +
    `})();</script>`
  );
}

// ---- a whole report page ----------------------------------------------------------------

export interface ReportSection {
  title: string;
  /** Raw HTML (e.g. a table from display.tableHtml); inserted as is. */
  html?: string;
  figure?: PlotlyFigure;
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/**
 * Write a self-contained HTML page (no network needed to view it): the plotly bundle is inlined
 * once in <head>, then each section is a heading followed by its HTML and/or its figure.
 */
export function writeHtmlReport(file: string, sections: ReportSection[], opts: { title?: string } = {}): void {
  const title = opts.title ?? "toolrl-collapse report";
  const body = sections
    .map((s) => {
      const parts = [`<h2>${escapeHtml(s.title)}</h2>`];
      if (s.html) parts.push(s.html);
      if (s.figure) parts.push(plotDivHtml(s.figure));
      return `<section>\n${parts.join("\n")}\n</section>`;
    })
    .join("\n");
  const page =
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${escapeHtml(title)}</title>\n` +
    `<style>body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}` +
    `section{margin-bottom:2.5em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em}</style>\n` +
    `${plotlyBundleScript()}\n</head>\n<body>\n<h1>${escapeHtml(title)}</h1>\n${body}\n</body>\n</html>\n`;
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  fs.writeFileSync(file, page);
}
