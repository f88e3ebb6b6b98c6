// Real-browser check of the notebook experience: JupyterLab from .venv, headless Chromium via
// playwright-core, "Run All Cells" from the menu, then wait for an inline plotly chart and an HTML
// table in the outputs and save a screenshot to artifacts/browser/notebook.png. The steps are those of
// scripts/lab-driver.ts, which `npm run screenshots` uses too.
//
// Skipped when /usr/bin/chromium is absent (Debian: apt-get install -y chromium).
// TOOLRL_BROWSER_NOTEBOOK picks the notebook (default notebooks/02-vanilla-rl.ipynb).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { CHROMIUM, Lab, cellErrors, closeSessions, openAndRunAll, startLab, waitForCells } from "../scripts/lab-driver";

const ROOT = path.resolve(__dirname, "..");
const NOTEBOOK = process.env.TOOLRL_BROWSER_NOTEBOOK ?? "notebooks/02-vanilla-rl.ipynb";
const OUT_DIR = path.join(ROOT, "artifacts", "browser");
const SCREENSHOT = path.join(OUT_DIR, "notebook.png");

const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} not found (apt-get install -y chromium)`;

let lab: Lab | null = null;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

before(async () => {
  if (skip) return;
  lab = await startLab(ROOT, { TOOLRL_PRESET: "smoke" });
});

after(async () => {
  await lab?.stop();
});

test(`JupyterLab runs ${NOTEBOOK} and renders a plotly chart and a table`, { skip, timeout: 480_000 }, async () => {
  assert.ok(lab, "lab not started");
  // Open a copy, so nothing JupyterLab does can write outputs into the committed notebook.
  // The kernel still runs at the repo root (scripts/tslab-kernel.sh), so ./lib imports resolve.
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const copy = path.join(OUT_DIR, path.basename(NOTEBOOK));
  fs.copyFileSync(path.join(ROOT, NOTEBOOK), copy);
  const rel = path.relative(ROOT, copy).split(path.sep).join("/");

  const page = await lab.browser.newPage({ viewport: { width: 1400, height: 1600 } });
  const consoleErrors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  const t0 = Date.now();
  await openAndRunAll(lab, page, rel);

  const outputs = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output");
  try {
    // generous: the notebook reads the whole committed store first, and the suite runs two files at a time
    await outputs.locator(".js-plotly-plot").first().waitFor({ state: "attached", timeout: 180_000 });
    await outputs.locator("table").first().waitFor({ state: "attached", timeout: 60_000 });
  } catch (e) {
    // Leave evidence: what the page showed, and what the server and the browser said.
    await page.screenshot({ path: path.join(OUT_DIR, "failure.png") }).catch(() => {});
    throw new Error(
      `${(e as Error).message}\nscreenshot: artifacts/browser/failure.png\n` +
        `browser console errors:\n${consoleErrors.slice(0, 10).join("\n")}\nserver log tail:\n${lab.log().slice(-3000)}`
    );
  }
  // Wait for the whole run: a running or queued cell shows "[*]" in its prompt.
  assert.ok(await waitForCells(page, 180_000), "cells still running after 180 s");
  const errors = await cellErrors(page);
  assert.deepEqual(errors, [], `cell errors:\n${errors.join("\n")}`);

  const plots = await outputs.locator(".js-plotly-plot").count();
  const tables = await outputs.locator("table").count();
  await outputs.locator(".js-plotly-plot").first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: SCREENSHOT });
  console.log(`# ${plots} plot(s), ${tables} table(s) in ${((Date.now() - t0) / 1000).toFixed(1)} s -> ${path.relative(ROOT, SCREENSHOT)}`);
  if (consoleErrors.length) console.log(`# browser console errors:\n#   ${consoleErrors.slice(0, 5).join("\n#   ")}`);
  assert.ok(plots >= 1 && tables >= 1);
  await page.close();
});

/**
 * The live chart of a training cell: notebook 02's RETRAIN cell turned on (smoke preset, a scratch results
 * root) must redraw its chart while the run trains, not only when it ends: at least two distinct "running"
 * states (step 1, step 2, ...) are seen before the cell finishes.
 */
test("a training cell's live chart updates while the run trains", { skip, timeout: 300_000 }, async () => {
  assert.ok(lab, "lab not started");
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const copy = path.join(OUT_DIR, "live-" + path.basename(NOTEBOOK));
  const nb = fs.readFileSync(path.join(ROOT, NOTEBOOK), "utf8");
  const call = 'retrainCell([\\"vanilla-rl-lr1e-3\\"])';
  assert.ok(nb.includes(call), `${NOTEBOOK} has no ${call} cell`);
  fs.writeFileSync(copy, nb.replace(call, 'retrainCell([\\"vanilla-rl\\"], { enabled: true, preset: \\"smoke\\", root: \\"runs/browser-live\\" })'));
  const rel = path.relative(ROOT, copy).split(path.sep).join("/");
  // the first test's kernel may still be up: stop every session, so the steady kernel below is this notebook's
  await closeSessions(lab);
  const page = await lab.browser.newPage({ viewport: { width: 1400, height: 1600 } });
  // a workspace of its own, so the first test's tab is not reopened (with a kernel of its own) next to this one
  await openAndRunAll(lab, page, rel, "live");
  // the live chart's header line: "[vanilla-rl (smoke, seed 1)] step N reward=... (running, 3.2 s)"
  const header = page.locator(".jp-OutputArea-output div", { hasText: /^\[vanilla-rl \(smoke, seed 1\)\] step/ });
  const running = new Set<string>();
  let done = false;
  const deadline = Date.now() + 240_000;
  while (Date.now() < deadline) {
    const texts = await header.allInnerTexts().catch(() => [] as string[]);
    for (const t of texts) {
      const m = /step (\d+) .*\((running|done)/.exec(t);
      if (m && m[2] === "running") running.add(m[1]);
      if (m && m[2] === "done") done = true;
    }
    if (done) break;
    const errors = await page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]').allInnerTexts();
    if (errors.length) {
      await page.screenshot({ path: path.join(OUT_DIR, "live.png") }).catch(() => {});
      assert.fail(`cell error:\n${errors.join("\n").slice(0, 2000)}`);
    }
    await sleep(100);
  }
  await page.screenshot({ path: path.join(OUT_DIR, "live.png") }).catch(() => {});
  await page.close();
  assert.ok(done, "the training cell did not finish within 240 s");
  assert.ok(running.size >= 2, `the live chart was seen running at step(s) [${[...running].join(", ")}] only`);
  console.log(`# live chart seen running at steps ${[...running].join(", ")}`);
});

