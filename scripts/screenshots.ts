// `npm run screenshots`: each notebook as a reader sees it in JupyterLab after "Run All Cells", one tall JPEG per
// notebook, at a projector's width (1280 px). The run is the one a class gets: the committed store, no retraining.
//   npm run screenshots                                   # notebooks 02, 06, 10 and 12 -> artifacts/screenshots/
//   npm run screenshots -- --out docs/screenshots notebooks/03-why-it-collapses.ipynb
// Needs chromium (apt-get install -y chromium) and the Jupyter venv (scripts/setup-jupyter.sh, run here if needed).

import * as fs from "node:fs";
import * as path from "node:path";
import { CHROMIUM, cellErrors, closeSessions, openAndRunAll, startLab, waitForCells } from "./lab-driver";

const ROOT = path.resolve(__dirname, "..");
const DEFAULT_NOTEBOOKS = ["02", "06", "10", "12"];
/** A projector's width; the height grows to the whole notebook. */
const WIDTH = 1280;
/** Chromium draws at most this many pixels in one capture; a taller notebook is cut (and says so). */
const MAX_HEIGHT = 30_000;

function parseArgs(argv: string[]): { out: string; notebooks: string[] } {
  let out = path.join(ROOT, "artifacts", "screenshots");
  const notebooks: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--out") out = path.resolve(argv[++i] ?? "");
    else if (argv[i].startsWith("--")) throw new Error(`unknown option ${argv[i]} (known: --out DIR)`);
    else notebooks.push(argv[i]);
  }
  const resolved = (notebooks.length ? notebooks : DEFAULT_NOTEBOOKS).map((n) => {
    const file = n.endsWith(".ipynb") ? n : path.join("notebooks", fs.readdirSync(path.join(ROOT, "notebooks"))
      .find((f) => f.startsWith(n) && f.endsWith(".ipynb")) ?? `${n}.ipynb`);
    if (!fs.existsSync(path.join(ROOT, file))) throw new Error(`no notebook ${file}`);
    return file;
  });
  return { out, notebooks: resolved };
}

async function main(): Promise<void> {
  const { out, notebooks } = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found (apt-get install -y chromium)`);
  fs.mkdirSync(out, { recursive: true });
  // Copies to open, so nothing JupyterLab does can write outputs into a committed notebook.
  const scratch = path.join(ROOT, "artifacts", "screenshots-open");
  fs.mkdirSync(scratch, { recursive: true });
  const lab = await startLab(ROOT);
  try {
    for (const nb of notebooks) {
      const name = path.basename(nb, ".ipynb");
      const copy = path.join(scratch, path.basename(nb));
      fs.copyFileSync(path.join(ROOT, nb), copy);
      await closeSessions(lab);
      const page = await lab.browser.newPage({ viewport: { width: WIDTH, height: 900 } });
      const t0 = Date.now();
      await openAndRunAll(lab, page, path.relative(ROOT, copy).split(path.sep).join("/"), name);
      await new Promise((r) => setTimeout(r, 2000));
      const finished = await waitForCells(page, 600_000);
      const errors = await cellErrors(page);
      // The file browser takes a fifth of the width a projector has: close it, as a teacher would.
      await page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')").catch(() => {});
      await new Promise((r) => setTimeout(r, 500));
      // The notebook scrolls inside its panel: grow the window to the panel's whole height, then capture it.
      const { top, height } = await page.evaluate(`(() => {
        const el = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
        return el ? { top: el.getBoundingClientRect().top, height: el.scrollHeight } : { top: 0, height: 900 };
      })()`) as { top: number; height: number };
      const full = Math.min(MAX_HEIGHT, Math.ceil(top + height + 40));
      await page.setViewportSize({ width: WIDTH, height: full });
      await new Promise((r) => setTimeout(r, 1500)); // plotly redraws on resize
      // Run All leaves the panel scrolled to its last cell; the capture starts at the first.
      await page.evaluate(`document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')
        ?.scrollTo(0, 0)`);
      await new Promise((r) => setTimeout(r, 300));
      const file = path.join(out, `${name}.jpg`);
      await page.screenshot({ path: file, type: "jpeg", quality: 70 });
      const secs = ((Date.now() - t0) / 1000).toFixed(0);
      const notes = [
        finished ? "" : "cells still running after 600 s",
        errors.length ? `${errors.length} cell error(s): ${errors[0].split("\n")[0]}` : "",
        top + height + 40 > MAX_HEIGHT ? `cut at ${MAX_HEIGHT} px of ${Math.ceil(top + height)}` : "",
      ].filter(Boolean);
      console.log(`${path.relative(ROOT, file)}  ${WIDTH}x${full}  ${secs} s${notes.length ? "  " + notes.join("; ") : ""}`);
      await page.close();
    }
  } finally {
    await lab.stop();
  }
}

main().catch((e) => {
  console.error(`screenshots: ${(e as Error).message}`);
  process.exit(1);
});
