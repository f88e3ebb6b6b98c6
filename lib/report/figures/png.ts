/**
 * PNG copies of figures, for the README and for readers without a browser at hand. Each figure is drawn
 * by the real plotly bundle in headless Chromium (through playwright-core) at report.html's size, and
 * its plot element is screenshotted, so the PNG shows what the page shows.
 *
 * PNGs are a convenience: without Chromium (or when it fails to start) we skip them with a note and never
 * fail the report.
 */
import * as fs from 'fs';
import * as path from 'path';
import { PlotlyFigure, plotlyBundleScript, scriptSafeJson } from './plotly';

export const CHROMIUM_PATH = '/usr/bin/chromium';
/** No sandbox (containers), no GPU, and nothing that would reach for the network. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

export interface PngJob {
  file: string;
  figure: PlotlyFigure;
}

export interface PngResult {
  written: string[];
  /** Why PNGs were skipped (or some failed); undefined when all were written. */
  note?: string;
}

export async function renderPngs(jobs: PngJob[], opts: { executablePath?: string; timeoutMs?: number } =
  {}): Promise<PngResult> {
  const exe = opts.executablePath ?? CHROMIUM_PATH;
  const timeout = opts.timeoutMs ?? 30000;
  if (!jobs.length) return { written: [] };
  if (!fs.existsSync(exe)) return { written: [],
    note: `no Chromium at ${exe}: PNG figures skipped (report.html has them all)` };
  let pw: typeof import('playwright-core');
  try {
    pw = await import('playwright-core');
  } catch (e) {
    return { written: [], note: `playwright-core not available (${(e as Error).message}): PNG figures skipped` };
  }
  const written: string[] = [];
  let browser: Awaited<ReturnType<typeof pw.chromium.launch>> | undefined;
  try {
    browser = await pw.chromium.launch({ executablePath: exe, args: CHROMIUM_ARGS, timeout });
    const page = await browser.newPage({ viewport: { width: 1000, height: 600 }, deviceScaleFactor: 2 });
    // The 4.8 MB bundle is parsed once; each figure is then drawn into a fresh div of the same page, with
    // the same size and config as report.html uses (plotDivHtml), and that element is screenshotted.
    await page.setContent(`<!DOCTYPE html><html><head><meta charset="utf-8">${plotlyBundleScript()}</head>` +
      '<body style="margin:0;background:#fff"></body></html>', { timeout });
    for (const job of jobs) {
      const height = typeof job.figure.layout.height === 'number' ? job.figure.layout.height : 380;
      // a string, not a function: tsx may wrap a function's source in helpers the browser does not have
      await page.evaluate(`(async () => {
        document.body.innerHTML = '<div id="png-fig" style="width:960px;height:${height}px"></div>';
        await window.Plotly.newPlot('png-fig', ${scriptSafeJson(job.figure.data)}, ${scriptSafeJson(job.figure.layout)},
          { displaylogo: false, displayModeBar: false });
      })()`);
      fs.mkdirSync(path.dirname(job.file), { recursive: true });
      await page.locator('#png-fig').screenshot({ path: job.file, timeout });
      written.push(job.file);
    }
    return { written };
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0];
    return { written, note: `PNG rendering stopped after ${written.length}/${jobs.length} figure(s): ${msg}` };
  } finally {
    await browser?.close().catch(() => undefined);
  }
}
