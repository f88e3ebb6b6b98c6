// Drives JupyterLab the way a reader does: a JupyterLab from .venv on a free port with quiet, isolated settings,
// headless Chromium through playwright-core, a notebook opened, "Run All Cells" from the menu, and a wait until no
// cell is queued. Used by the browser test (test/browser.test.ts) and by `npm run screenshots`
// (scripts/screenshots.ts), so both see the notebooks through the same steps.

import { spawn, spawnSync, ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { chromium, Browser, Page } from "playwright-core";
import { freePort } from "./free-port";

export const CHROMIUM = process.env.TOOLRL_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A running JupyterLab and a browser pointed at it. */
export interface Lab {
  baseUrl: string;
  token: string;
  browser: Browser;
  /** Everything the server printed so far (for error messages). */
  log(): string;
  request(method: string, url: string): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

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
  // Never write outputs back into a notebook (callers open a copy anyway).
  put("@jupyterlab/docmanager-extension/plugin.jupyterlab-settings", { autosave: false });
}

/**
 * Set up Jupyter (scripts/setup-jupyter.sh), start JupyterLab at `root` with the extra environment `env`, wait until
 * it answers, and launch Chromium. Throws with the server's log when either does not come up.
 */
export async function startLab(root: string, env: Record<string, string> = {}): Promise<Lab> {
  const setup = spawnSync("bash", [path.join(root, "scripts", "setup-jupyter.sh")], { cwd: root, encoding: "utf8" });
  if (setup.status !== 0) throw new Error(`scripts/setup-jupyter.sh failed:\n${setup.stdout}\n${setup.stderr}`);
  const token = randomBytes(16).toString("hex");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "toolrl-lab-"));
  writeLabSettings(path.join(tmp, "settings"));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const args = [
    "lab",
    "--no-browser",
    "--ip=127.0.0.1",
    `--port=${port}`,
    "--ServerApp.port_retries=0",
    `--IdentityProvider.token=${token}`,
    `--ServerApp.root_dir=${root}`,
    // Lets runAllCells fall back to jupyterapp.commands if the menu layout ever changes.
    "--LabApp.expose_app_in_browser=True",
  ];
  if (process.getuid && process.getuid() === 0) args.push("--allow-root");
  const server: ChildProcess = spawn(path.join(root, ".venv", "bin", "jupyter"), args, {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      // Isolate from the user's Jupyter config, lab settings and saved workspaces.
      JUPYTER_CONFIG_DIR: path.join(tmp, "config"),
      JUPYTERLAB_SETTINGS_DIR: path.join(tmp, "settings"),
      JUPYTERLAB_WORKSPACES_DIR: path.join(tmp, "workspaces"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let serverLog = "";
  server.stdout?.on("data", (d) => (serverLog += d));
  server.stderr?.on("data", (d) => (serverLog += d));

  const request = (method: string, url: string) =>
    new Promise<{ status: number; body: string }>((resolve) => {
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

  const deadline = Date.now() + 30_000;
  while ((await request("GET", `${baseUrl}/api/status`)).status !== 200) {
    if (server.exitCode !== null) throw new Error(`jupyter lab exited early:\n${serverLog.slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`jupyter lab did not answer within 30 s:\n${serverLog.slice(-4000)}`);
    await sleep(300);
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const stop = async () => {
    await browser.close().catch(() => {});
    if (server.exitCode !== null) return;
    // /api/shutdown stops the kernels too; signals are the fallback.
    await request("POST", `${baseUrl}/api/shutdown`);
    const exited = new Promise((r) => server.once("exit", r));
    const t = setTimeout(() => server.kill("SIGTERM"), 5000);
    const k = setTimeout(() => server.kill("SIGKILL"), 10000);
    await exited;
    clearTimeout(t);
    clearTimeout(k);
  };
  return { baseUrl, token, browser, log: () => serverLog, request, stop };
}

/**
 * Wait until the server has exactly one kernel and it has been idle for a moment.
 * On opening a notebook JupyterLab may start a kernel, replace it with a second one and shut the
 * first down (seen with JupyterLab 4.6); cells queued on the first one are lost, so "Run All"
 * right after page load ran only the first cell.
 */
async function waitForSteadyKernel(lab: Lab, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let steadySince = 0;
  let last = "";
  while (Date.now() < deadline) {
    const { status, body } = await lab.request("GET", `${lab.baseUrl}/api/kernels`);
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
  throw new Error(`no steady idle kernel after ${timeoutMs / 1000} s:\n${lab.log().slice(-3000)}`);
}

/** Stop every kernel session, so the next notebook's steady kernel is its own. */
export async function closeSessions(lab: Lab): Promise<void> {
  const sessions = await lab.request("GET", `${lab.baseUrl}/api/sessions`);
  for (const sess of sessions.status === 200 ? (JSON.parse(sessions.body) as { id: string }[]) : []) {
    await lab.request("DELETE", `${lab.baseUrl}/api/sessions/${sess.id}`);
  }
}

/**
 * Open the notebook at `rel` (relative to the server root) in a workspace of its own, wait for its kernel, and press
 * "Run All Cells" in the Run menu (jupyterapp.commands if the menu is not found).
 */
export async function openAndRunAll(lab: Lab, page: Page, rel: string, workspace?: string): Promise<void> {
  const where = workspace ? `workspaces/${workspace}/tree/${rel}?reset&` : `tree/${rel}?`;
  await page.goto(`${lab.baseUrl}/lab/${where}token=${lab.token}`);
  await page.locator(".jp-Notebook .jp-Cell").first().waitFor({ timeout: 30_000 });
  await waitForSteadyKernel(lab, 30_000);
  await page
    .locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    .first()
    .waitFor({ timeout: 10_000 })
    .catch(() => {});
  try {
    await page.locator("#jp-MainMenu .lm-MenuBar-itemLabel", { hasText: /^Run$/ }).click({ timeout: 10_000 });
    await page.locator(".lm-Menu-itemLabel", { hasText: /^Run All Cells$/ }).click({ timeout: 5_000 });
  } catch (e) {
    console.log(`# menu click failed (${(e as Error).message.split("\n")[0]}); using jupyterapp.commands`);
    await page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')");
  }
}

/** Wait until no cell is running or queued (a "[*]" prompt); false when `timeoutMs` passes first. */
export async function waitForCells(page: Page, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while ((await page.locator(".jp-InputPrompt", { hasText: "[*]" }).count()) > 0) {
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
  return true;
}

/** The text of every error output on the page. */
export function cellErrors(page: Page): Promise<string[]> {
  return page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]').allInnerTexts();
}
