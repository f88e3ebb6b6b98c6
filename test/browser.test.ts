// Real-browser check of the notebook experience: JupyterLab from .venv, headless Chromium via
// playwright-core, "Run All Cells" from the menu, then wait for an inline plotly chart and an HTML
// table in the outputs and save a screenshot to artifacts/browser/notebook.png.
//
// Skipped when /usr/bin/chromium is absent (Debian: apt-get install -y chromium).
// TOOLRL_BROWSER_NOTEBOOK picks the notebook (default notebooks/02-vanilla-rl.ipynb).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { chromium, Browser, Page } from "playwright-core";
import { freePort } from "./helpers";

const ROOT = path.resolve(__dirname, "..");
const CHROMIUM = process.env.TOOLRL_CHROMIUM ?? "/usr/bin/chromium";
const NOTEBOOK = process.env.TOOLRL_BROWSER_NOTEBOOK ?? "notebooks/02-vanilla-rl.ipynb";
const OUT_DIR = path.join(ROOT, "artifacts", "browser");
const SCREENSHOT = path.join(OUT_DIR, "notebook.png");
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} not found (apt-get install -y chromium)`;

let server: ChildProcess | null = null;
let serverLog = "";
let browser: Browser | null = null;
let baseUrl = "";
const token = randomBytes(16).toString("hex");


function request(method: string, url: string): Promise<number> {
  return requestBody(method, url).then((r) => r.status);
}

function requestBody(method: string, url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.request(url, { method, headers: { Authorization: `token ${token}` } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", () => resolve({ status: 0, body: "" }));
    req.setTimeout(2000, () => req.destroy());
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** JupyterLab user settings for a clean, quiet, deterministic session. */
function writeLabSettings(dir: string): void {
  const put = (rel: string, value: unknown) => {
    const f = path.join(dir, rel);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, JSON.stringify(value));
  };
  // No "receive Jupyter news?" toast and no update check (no network here anyway).
  put("@jupyterlab/apputils-extension/notification.jupyterlab-settings", { fetchNews: "false", checkForUpdates: false });
  // Keep every cell in the DOM so selectors see outputs below the fold.
  put("@jupyterlab/notebook-extension/tracker.jupyterlab-settings", { windowingMode: "none" });
  // Never write outputs back into a notebook (we open a copy anyway).
  put("@jupyterlab/docmanager-extension/plugin.jupyterlab-settings", { autosave: false });
}

before(async () => {
  if (skip) return;
  const setup = spawnSync("bash", [path.join(ROOT, "scripts", "setup-jupyter.sh")], { cwd: ROOT, encoding: "utf8" });
  assert.equal(setup.status, 0, `scripts/setup-jupyter.sh failed:\n${setup.stdout}\n${setup.stderr}`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolrl-lab-"));
  writeLabSettings(path.join(tmp, "settings"));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const args = [
    "lab",
    "--no-browser",
    "--ip=127.0.0.1",
    `--port=${port}`,
    "--ServerApp.port_retries=0",
    `--IdentityProvider.token=${token}`,
    `--ServerApp.root_dir=${ROOT}`,
    // Lets the test fall back to jupyterapp.commands if the menu layout ever changes.
    "--LabApp.expose_app_in_browser=True",
  ];
  if (process.getuid && process.getuid() === 0) args.push("--allow-root");
  server = spawn(path.join(ROOT, ".venv", "bin", "jupyter"), args, {
    cwd: ROOT,
    env: {
      ...process.env,
      TOOLRL_PRESET: "smoke",
      // Isolate from the user's Jupyter config, lab settings and saved workspaces.
      JUPYTER_CONFIG_DIR: path.join(tmp, "config"),
      JUPYTERLAB_SETTINGS_DIR: path.join(tmp, "settings"),
      JUPYTERLAB_WORKSPACES_DIR: path.join(tmp, "workspaces"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout?.on("data", (d) => (serverLog += d));
  server.stderr?.on("data", (d) => (serverLog += d));

  const deadline = Date.now() + 30_000;
  while ((await request("GET", `${baseUrl}/api/status`)) !== 200) {
    assert.ok(server.exitCode === null, `jupyter lab exited early:\n${serverLog.slice(-4000)}`);
    assert.ok(Date.now() < deadline, `jupyter lab did not answer within 30 s:\n${serverLog.slice(-4000)}`);
    await sleep(300);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

after(async () => {
  await browser?.close().catch(() => {});
  if (server && server.exitCode === null) {
    // /api/shutdown stops the kernels too; signals are the fallback.
    await request("POST", `${baseUrl}/api/shutdown`);
    const exited = new Promise((r) => server?.once("exit", r));
    const t = setTimeout(() => server?.kill("SIGTERM"), 5000);
    const k = setTimeout(() => server?.kill("SIGKILL"), 10000);
    await exited;
    clearTimeout(t);
    clearTimeout(k);
  }
});

/**
 * Wait until the server has exactly one kernel and it has been idle for a moment.
 * On opening a notebook JupyterLab may start a kernel, replace it with a second one and shut the
 * first down (seen with JupyterLab 4.6); cells queued on the first one are lost, so "Run All"
 * right after page load ran only the first cell.
 */
async function waitForSteadyKernel(timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let steadySince = 0;
  let last = "";
  while (Date.now() < deadline) {
    const { status, body } = await requestBody("GET", `${baseUrl}/api/kernels`);
    const kernels = status === 200 ? (JSON.parse(body) as { id: string; execution_state: string }[]) : [];
    const now = kernels.length === 1 && kernels[0].execution_state === "idle" ? kernels[0].id : "";
    if (now && now === last) {
      if (Date.now() - steadySince >= 1500) return;
    } else {
      steadySince = Date.now();
    }
    last = now;
    await sleep(250);
  }
  throw new Error(`no steady idle kernel after ${timeoutMs / 1000} s:\n${serverLog.slice(-3000)}`);
}

async function runAllCells(page: Page): Promise<void> {
  try {
    await page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", { hasText: /^Run$/ }).click({ timeout: 10_000 });
    await page.locator(".lm-Menu-itemLabel", { hasText: /^Run All Cells$/ }).click({ timeout: 5_000 });
  } catch (e) {
    console.log(`# menu click failed (${(e as Error).message.split("\n")[0]}); using jupyterapp.commands`);
    await page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')");
  }
}

test(`JupyterLab runs ${NOTEBOOK} and renders a plotly chart and a table`, { skip, timeout: 480_000 }, async () => {
  assert.ok(browser, "browser not started");
  // Open a copy, so nothing JupyterLab does can write outputs into the committed notebook.
  // The kernel still runs at the repo root (scripts/tslab-kernel.sh), so ./lib imports resolve.
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const copy = path.join(OUT_DIR, path.basename(NOTEBOOK));
  fs.copyFileSync(path.join(ROOT, NOTEBOOK), copy);
  const rel = path.relative(ROOT, copy).split(path.sep).join("/");

  const page = await browser.newPage({ viewport: { width: 1400, height: 1600 } });
  const consoleErrors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  const t0 = Date.now();
  await page.goto(`${baseUrl}/lab/tree/${rel}?token=${token}`);
  await page.locator(".jp-Notebook .jp-Cell").first().waitFor({ timeout: 30_000 });
  await waitForSteadyKernel(30_000);
  await page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first().waitFor({ timeout: 10_000 }).catch(() => {});
  await runAllCells(page);

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
        `browser console errors:\n${consoleErrors.slice(0, 10).join("\n")}\nserver log tail:\n${serverLog.slice(-3000)}`
    );
  }
  // Wait for the whole run: a running or queued cell shows "[*]" in its prompt.
  const deadline = Date.now() + 180_000;
  while ((await page.locator(".jp-InputPrompt", { hasText: "[*]" }).count()) > 0) {
    assert.ok(Date.now() < deadline, "cells still running after 180 s");
    await sleep(250);
  }
  const errors = await page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]').allInnerTexts();
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
  assert.ok(browser, "browser not started");
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const copy = path.join(OUT_DIR, "live-" + path.basename(NOTEBOOK));
  const nb = fs.readFileSync(path.join(ROOT, NOTEBOOK), "utf8");
  const call = 'retrainCell([\\"vanilla-rl-lr1e-3\\"])';
  assert.ok(nb.includes(call), `${NOTEBOOK} has no ${call} cell`);
  fs.writeFileSync(copy, nb.replace(call, 'retrainCell([\\"vanilla-rl\\"], { enabled: true, preset: \\"smoke\\", root: \\"runs/browser-live\\" })'));
  const rel = path.relative(ROOT, copy).split(path.sep).join("/");
  // the first test's kernel may still be up: stop every session, so the steady kernel below is this notebook's
  const sessions = await requestBody("GET", `${baseUrl}/api/sessions`);
  for (const sess of sessions.status === 200 ? (JSON.parse(sessions.body) as { id: string }[]) : []) {
    await request("DELETE", `${baseUrl}/api/sessions/${sess.id}`);
  }
  const page = await browser.newPage({ viewport: { width: 1400, height: 1600 } });
  // a workspace of its own, so the first test's tab is not reopened (with a kernel of its own) next to this one
  await page.goto(`${baseUrl}/lab/workspaces/live/tree/${rel}?reset&token=${token}`);
  await page.locator(".jp-Notebook .jp-Cell").first().waitFor({ timeout: 30_000 });
  await waitForSteadyKernel(30_000);
  await page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first().waitFor({ timeout: 10_000 }).catch(() => {});
  await runAllCells(page);
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

