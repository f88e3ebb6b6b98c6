// Notebook display helpers: one call each, and harmless outside a notebook.
//
//   showPlot(lineFigure({...}))          inline plotly chart
//   showTable(df or rows, {caption})     HTML table
//   const p = liveProgress({...}); p.update(step, {...}); p.done()   one chart updated in place
//
// Inside the project's tslab kernel (notebooks import "./lib/report/display") they emit rich
// outputs through tslab. Anywhere else (node:test, the CLI, a plain `tsx` script) they print a
// short text fallback instead and never throw.

import type { Display } from 'tslab';
import { PlotlyFigure, lineFigure, plotDivHtml, plotlyBundleScript } from '../figures/plotly';
import { OUTPUT_WIDTH_PX, TableInput, TableOptions, tableHtml, tableText } from '../render/rows';

export { lineFigure } from '../figures/plotly';
export type { PlotlyFigure, LineFigureSpec, LineSeries } from '../figures/plotly';

interface TslabModule {
  display: Display;
  newDisplay(): Display;
}

// ---- are we in a tslab kernel? ----------------------------------------------------------

// tslab's executor sets globalThis.__tslab__ in the kernel process before running any cell, and
// our kernelspec (jupyter/kernels/toolrl-tslab) sets TOOLRL_TSLAB_KERNEL=1. Either is enough.
export function inTslabKernel(): boolean {
  const g = globalThis as { __tslab__?: unknown };
  return g.__tslab__ !== undefined || process.env.TOOLRL_TSLAB_KERNEL === '1';
}

let tslabCache: TslabModule | null | undefined;

/**
 * The tslab module, or null outside a kernel.
 *
 * Not a static `import "tslab"`: that would load tslab's TypeScript compiler and the zeromq native addon
 * (~0.4 s) into every test and CLI process that merely imports this file, and crash them where zeromq has
 * no prebuilt binary. Inside the kernel, tslab's executor publishes its own module loader as
 * `globalThis.__tslab__.require`, which hands back the live instance wired to the notebook.
 */
function tslab(): TslabModule | null {
  if (tslabCache === undefined) {
    tslabCache = null;
    const g = globalThis as { __tslab__?: { require?: (id: string) => unknown } };
    const load = g.__tslab__?.require;
    if (inTslabKernel() && typeof load === 'function') {
      try {
        tslabCache = load('tslab') as TslabModule;
      } catch {
        tslabCache = null;
      }
    }
  }
  return tslabCache;
}

/** Send HTML to the notebook; false when there is no notebook to send to (then use text). */
function emitHtml(html: string, target?: Display): boolean {
  const t = tslab();
  if (!t) return false;
  try {
    (target ?? t.display).html(html);
    return true;
  } catch {
    // tslab throws "Not ready" when loaded in a process that is not serving a notebook
    // (e.g. a child process that inherited TOOLRL_TSLAB_KERNEL).
    return false;
  }
}

// ---- plotly bundle: once per kernel session -------------------------------------------

// The flag lives on globalThis, not in a module variable: tslab recompiles lib/ files when they
// change, which would reset a module variable and inline 4.8 MB again. A kernel restart starts a
// fresh process, so the flag resets exactly when the page needs the bundle again.
const session = globalThis as { __toolrlPlotlyInlined?: boolean };

/** Inline the plotly bundle as its own (invisible) output, unless done this session. */
function ensurePlotly(): boolean {
  if (session.__toolrlPlotlyInlined) return true;
  // Its own output, so a live display (liveProgress) never re-sends the bundle on each update.
  if (!emitHtml(plotlyBundleScript())) return false;
  session.__toolrlPlotlyInlined = true;
  return true;
}

/** Inline the plotly bundle again (e.g. after clearing the output that held it and reloading). */
export function reloadPlotly(): void {
  session.__toolrlPlotlyInlined = false;
  ensurePlotly();
}

// ---- public helpers ---------------------------------------------------------------------

function plotSummary(fig: PlotlyFigure): string {
  const title = (fig.layout.title as { text?: string } | undefined)?.text ?? '(untitled)';
  const names = fig.data.map((d) => String(d.name ?? d.type ?? 'trace'));
  return `[plot] ${title}: ${names.length} trace(s) ${names.join(', ')} (rendered only in a notebook)`;
}

/** Show a plotly figure inline. Outside a notebook: prints a one-line summary. */
export function showPlot(fig: PlotlyFigure, opts: { height?: number } = {}): void {
  if (ensurePlotly() && emitHtml(plotDivHtml(fig, opts))) return;
  console.log(plotSummary(fig));
}

/** Show a danfojs DataFrame or plain rows as a table. Outside a notebook: aligned text. */
export function showTable(input: TableInput, opts: TableOptions = {}): void {
  if (emitHtml(tableHtml(input, { maxWidth: OUTPUT_WIDTH_PX, ...opts }))) return;
  console.log(tableText(input, opts));
}

/** Show raw HTML. Outside a notebook: nothing (there is no sensible text form of arbitrary HTML). */
export function showHtml(html: string): void {
  emitHtml(html);
}

// ---- live progress ----------------------------------------------------------------------

export interface LiveProgressOptions {
  title: string;
  metrics: string[];
  /** Redraw after this many updates (default 1). */
  every?: number;
  xTitle?: string;
}

export interface LiveProgress {
  update(step: number, values: Record<string, number>): void;
  done(): void;
}

function fmt(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toPrecision(4);
}

/**
 * One output that redraws in place (tslab.newDisplay): a line chart of `metrics` over steps plus
 * the latest values. Outside a notebook: a one-line progress on stderr.
 *
 * Outputs travel to the browser over zeromq only when the event loop runs. An async training
 * loop (anything that awaits) updates live; a fully synchronous loop shows only the final state,
 * so await something (e.g. `await new Promise((r) => setImmediate(r))`) between steps.
 */
export function liveProgress(opts: LiveProgressOptions): LiveProgress {
  const every = Math.max(1, Math.floor(opts.every ?? 1));
  const steps: number[] = [];
  const series = new Map<string, number[]>(opts.metrics.map((m) => [m, []]));
  const started = Date.now();
  let pending = 0;
  let latest = '';

  const t = tslab();
  const live = t ? t.newDisplay() : null;
  let rich = live !== null && ensurePlotly();

  function textLine(step: number, values: Record<string, number>): string {
    const parts = opts.metrics.filter((m) => m in values).map((m) => `${m}=${fmt(values[m])}`);
    return `[${opts.title}] step ${step} ${parts.join(' ')}`;
  }

  function render(final: boolean): void {
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    const status = final ? `done in ${secs} s` : `running, ${secs} s`;
    if (rich && live) {
      // NaN (a metric missing at a step) serialises to null, which plotly draws as a gap.
      const fig = lineFigure({
        title: opts.title,
        x: steps,
        series: opts.metrics.map((m) => ({ name: m, y: series.get(m) ?? [] })),
        xTitle: opts.xTitle ?? 'step',
      });
      const text = latest.replace(/&/g, '&amp;').replace(/</g, '&lt;');
      const head = `<div style="font-family:monospace;font-size:13px">${text} (${status})</div>`;
      rich = emitHtml(head + plotDivHtml(fig, { height: 320 }), live);
      if (rich) return;
    }
    // Text fallback: redraw one line on a terminal, append lines elsewhere (logs, CI).
    if (process.stderr.isTTY) process.stderr.write(`\r${latest} (${status})${final ? '\n' : ''}`);
    else process.stderr.write(`${latest} (${status})\n`);
  }

  return {
    update(step: number, values: Record<string, number>): void {
      steps.push(step);
      for (const [m, ys] of series) ys.push(m in values ? values[m] : NaN);
      latest = textLine(step, values);
      pending += 1;
      if (steps.length === 1 || pending >= every) {
        pending = 0;
        render(false);
      }
    },
    done(): void {
      if (steps.length > 0) render(true);
    },
  };
}
