// Executes every notebooks/*.ipynb headlessly, as a user running all cells would, and exports
// the result to artifacts/notebooks/<name>.html (plots and tables included; open it in a browser).
//
// tslab reports a type error or an uncaught throw as a cell error, which makes
// `jupyter nbconvert --execute` exit 1; we fail the test with nbconvert's output, which names the
// cell and carries the error text. TOOLRL_PRESET=smoke keeps the notebooks' training runs tiny.

import { test, before } from "node:test";
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { chromium } from "playwright-core";

const ROOT = path.resolve(__dirname, "..");
const JUPYTER = path.join(ROOT, ".venv", "bin", "jupyter");
const OUT_DIR = path.join(ROOT, "artifacts", "notebooks");
const KERNEL = "toolrl-tslab";
const NOTEBOOK_TIMEOUT_MS = 15 * 60 * 1000;
const CHROMIUM = process.env.TOOLRL_CHROMIUM ?? "/usr/bin/chromium";

const notebooks = fs.existsSync(path.join(ROOT, "notebooks"))
  ? fs.readdirSync(path.join(ROOT, "notebooks")).filter((f) => f.endsWith(".ipynb")).sort()
  : [];

let setupError: string | null = null;

before(() => {
  // On demand and idempotent: ~25 s the first time, ~0.05 s once .venv is in place.
  const r = spawnSync("bash", [path.join(ROOT, "scripts", "setup-jupyter.sh")], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) setupError = `scripts/setup-jupyter.sh failed (exit ${r.status}):\n${r.stdout}\n${r.stderr}`;
  fs.mkdirSync(OUT_DIR, { recursive: true });
});

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

if (notebooks.length === 0) {
  test("notebooks/*.ipynb", { skip: "no notebooks found" }, () => {});
}

for (const nb of notebooks) {
  test(`notebook ${nb} executes without errors`, { timeout: NOTEBOOK_TIMEOUT_MS }, async () => {
    assert.equal(setupError, null, setupError ?? "");
    const t0 = Date.now();
    // Export into a scratch folder and rename into place: test/browser.test.ts may be reading
    // artifacts/notebooks/ concurrently and must never see a half-written file.
    const scratch = fs.mkdtempSync(path.join(OUT_DIR, ".tmp-"));
    const { code, out } = await run(
      JUPYTER,
      [
        "nbconvert",
        "--to",
        "html",
        "--execute",
        `--ExecutePreprocessor.kernel_name=${KERNEL}`,
        "--ExecutePreprocessor.timeout=600",
        "--output-dir",
        scratch,
        path.join("notebooks", nb),
      ],
      { ...process.env, TOOLRL_PRESET: "smoke" }
    );
    // The last ~8k characters hold nbconvert's CellExecutionError: the failing cell and the error.
    if (code !== 0) fs.rmSync(scratch, { recursive: true, force: true });
    assert.equal(code, 0, `nbconvert failed on notebooks/${nb} (exit ${code}):\n${out.slice(-8000)}`);
    const htmlName = nb.replace(/\.ipynb$/, ".html");
    fs.renameSync(path.join(scratch, htmlName), path.join(OUT_DIR, htmlName));
    fs.rmSync(scratch, { recursive: true, force: true });
    const html = fs.readFileSync(path.join(OUT_DIR, htmlName), "utf8");
    // display.ts inlines the 4.8 MB plotly bundle once per kernel session, never per plot.
    const bundles = html.split("* plotly.js v").length - 1;
    assert.ok(bundles <= 1, `plotly bundle inlined ${bundles} times in ${nb}; expected at most once`);
    const drawn = await countDrawnPlots(path.join(OUT_DIR, htmlName), html);
    console.log(`# ${nb}: ${((Date.now() - t0) / 1000).toFixed(1)} s, ${drawn} plot(s) drawn -> ${path.relative(ROOT, OUT_DIR)}/${htmlName}`);
  });
}

/**
 * Open the exported page in headless Chromium (when installed) and check that every plot div
 * display.ts wrote was actually drawn by plotly, offline. Returns the count, or "-" without Chromium.
 */
async function countDrawnPlots(file: string, html: string): Promise<number | string> {
  const expected = html.split(`class="toolrl-plot"`).length - 1;
  if (expected === 0 || !fs.existsSync(CHROMIUM)) return expected === 0 ? 0 : "-";
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    const page = await browser.newPage();
    // The export links require.js and MathJax from a CDN; offline those fail, which is fine.
    await page.goto(`file://${file}`, { waitUntil: "load", timeout: 60_000 });
    const drawn = page.locator(".toolrl-plot.js-plotly-plot");
    const deadline = Date.now() + 20_000;
    while ((await drawn.count()) < expected && Date.now() < deadline) await page.waitForTimeout(200);
    const n = await drawn.count();
    assert.equal(n, expected, `${path.basename(file)}: plotly drew ${n} of ${expected} plots in the exported HTML`);
    return n;
  } finally {
    await browser.close();
  }
}
