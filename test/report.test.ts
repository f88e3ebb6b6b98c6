// Pure parts of lib/report: figure specs, tables, the report page, and the display helpers'
// behaviour outside a notebook (they must print a fallback, never throw).

import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { lineFigure, plotDivHtml, writeHtmlReport, scriptSafeJson } from "../lib/report/figures/plotly";
import { tableHtml, tableText } from "../lib/report/render/rows";
import { showPlot, showTable, liveProgress } from "../lib/report/notebook/display";
import { notebookRegime, notebookResultsRoot, pickResultsPreset } from "../lib/report/notebook/views";

test("lineFigure uses {text} titles (plotly 3 ignores bare strings)", () => {
  const fig = lineFigure({ title: "T", x: [0, 1], series: [{ name: "a", y: [1, 2] }], xTitle: "step", yTitle: "v" });
  assert.deepEqual(fig.layout.title, { text: "T" });
  assert.deepEqual((fig.layout.xaxis as { title: unknown }).title, { text: "step" });
  assert.equal(fig.data.length, 1);
  assert.deepEqual(fig.data[0].x, [0, 1]);
});

test("figure JSON cannot close the <script> it lives in", () => {
  const fig = lineFigure({ title: "</script><b>x", x: [0], series: [{ name: "a", y: [0] }] });
  const html = plotDivHtml(fig);
  assert.equal(html.match(/<\/script>/g)?.length, 1);
  assert.ok(scriptSafeJson("</script>").includes("\\u003c/script>"));
});

test("tables from rows and from a DataFrame-like object", () => {
  const rows = [{ a: "x", b: 1.23456 }, { a: "y", b: 2, c: true }];
  const html = tableHtml(rows, { caption: "cap<", digits: 2 });
  assert.ok(html.includes("<caption>cap&lt;</caption>"));
  assert.ok(html.includes(">1.23<"));
  assert.ok(html.includes("<th") && html.includes(">c</th>"));
  const df = { columns: ["k", "v"], values: [["p", 0.5], ["q", 1]], index: [0, 1] };
  const text = tableText(df);
  assert.match(text, /^k\s+v\n/);
  assert.ok(text.includes("0.500"));
});

test("a table wider than maxWidth is drawn as parts that fit, each repeating the key columns", () => {
  // 14 columns like notebook 02's per-seed summary: method, seed and twelve wide-headed values
  const cols = Array.from({ length: 12 }, (_, i) => `late value number ${i} %`);
  const rows = [1, 2, 3].map((seed) => ({ method: "vanilla GRPO", seed, ...Object.fromEntries(cols.map((c) => [c, 12.5])) }));
  const parts = tableHtml(rows, { caption: "per seed", maxWidth: 1100 }).split("<table").slice(1);
  assert.ok(parts.length >= 2, `${parts.length} part(s)`);
  parts.forEach((p, i) => {
    assert.ok(p.includes(`per seed (${i + 1} of ${parts.length})`));
    assert.ok(p.includes(">method</th>") && p.includes(">seed</th>"), "each part keeps method and seed");
  });
  // every value column appears exactly once across the parts, in order
  const heads = parts.flatMap((p) => [...p.matchAll(/>(late value number \d+ %)<\/th>/g)].map((m) => m[1]));
  assert.deepEqual(heads, cols);
  // a narrow table, or no maxWidth, stays one table with its own caption
  assert.equal(tableHtml(rows.map((r) => ({ method: r.method, seed: r.seed })), { caption: "c", maxWidth: 1100 })
    .split("<table").length - 1, 1);
  assert.equal(tableHtml(rows, { caption: "c" }).split("<table").length - 1, 1);
});

test("writeHtmlReport inlines the plotly bundle once", () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "toolrl-report-")), "sub", "report.html");
  const fig = lineFigure({ title: "T", x: [0, 1], series: [{ name: "a", y: [1, 2] }] });
  writeHtmlReport(file, [
    { title: "one", figure: fig },
    { title: "two", figure: fig, html: tableHtml([{ a: 1 }]) },
  ]);
  const page = fs.readFileSync(file, "utf8");
  assert.equal(page.split("* plotly.js v").length - 1, 1);
  assert.equal(page.split(`class="toolrl-plot"`).length - 1, 2);
});

test("display helpers fall back to text outside a tslab kernel", () => {
  const logged: string[] = [];
  const origLog = console.log;
  const origErr = process.stderr.write;
  console.log = (...a: unknown[]) => void logged.push(a.join(" "));
  process.stderr.write = ((s: string) => (logged.push(String(s)), true)) as typeof process.stderr.write;
  try {
    showPlot(lineFigure({ title: "T", x: [0], series: [{ name: "a", y: [0] }] }));
    showTable([{ a: 1 }]);
    const p = liveProgress({ title: "run", metrics: ["loss"], every: 2 });
    p.update(1, { loss: 0.5 });
    p.update(2, { loss: 0.25 });
    p.done();
  } finally {
    console.log = origLog;
    process.stderr.write = origErr;
  }
  assert.ok(logged.some((l) => l.startsWith("[plot] T")));
  assert.ok(logged.some((l) => l.includes("a\n-")));
  assert.ok(logged.some((l) => l.includes("[run] step 2 loss=0.2500")));
});

test("pickResultsPreset: the full store when it holds every run compared, else the quick one", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "toolrl-pick-"));
  const finished = (preset: string, config: string) => {
    const dir = path.join(root, preset, config, "seed-1");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "run.json"), "{}");
    fs.writeFileSync(path.join(dir, "summary.json"), "{}"); // matches run.json: finished as reproduce counts it
  };
  const saved = process.env.TOOLRL_RESULTS_PRESET;
  delete process.env.TOOLRL_RESULTS_PRESET;
  const logged: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => { logged.push(a.join(" ")); };
  try {
    finished("full", "vanilla-rl");
    finished("quick", "vanilla-rl");
    fs.mkdirSync(path.join(root, "full", "ops", "seed-1"), { recursive: true }); // started, not finished
    assert.equal(pickResultsPreset(root, ["vanilla-rl"]), "full");
    assert.equal(logged.length, 0);
    assert.equal(pickResultsPreset(root, ["vanilla-rl", "ops"]), "full"); // neither has ops: the first wins
    finished("quick", "ops");
    assert.equal(pickResultsPreset(root, ["vanilla-rl", "ops"]), "quick");
    assert.match(logged.join("\n"), /full lacks ops/);
    process.env.TOOLRL_RESULTS_PRESET = "smoke";
    assert.equal(pickResultsPreset(root, ["vanilla-rl", "ops"]), "smoke");
  } finally {
    console.log = log;
    if (saved === undefined) delete process.env.TOOLRL_RESULTS_PRESET;
    else process.env.TOOLRL_RESULTS_PRESET = saved;
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("notebook settings are checked where they are read: a typo in a preset, regime or results folder is one clear line", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "toolrl-env-"));
  const saved = { ...process.env };
  const withEnv = (env: Record<string, string>, fn: () => unknown) => {
    Object.assign(process.env, env);
    try {
      return fn();
    } finally {
      for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
    }
  };
  try {
    fs.mkdirSync(path.join(root, "full", "vanilla-rl", "seed-1"), { recursive: true });
    fs.mkdirSync(path.join(root, "scratch", "ops", "seed-2"), { recursive: true });
    // the preset: a known one, or a store folder under the root, else refused with both lists
    assert.throws(() => withEnv({ TOOLRL_RESULTS_PRESET: "ful" }, () => pickResultsPreset(root, ["vanilla-rl"])),
      /^Error: TOOLRL_RESULTS_PRESET="ful" names no preset \(micro, smoke, class, quick, full, pipeline\) and no store under .* \(full, scratch\)$/);
    assert.equal(withEnv({ TOOLRL_RESULTS_PRESET: "scratch" }, () => pickResultsPreset(root, ["ops"])), "scratch");
    assert.equal(withEnv({ TOOLRL_RESULTS_PRESET: "quick" }, () => pickResultsPreset(root, ["ops"])), "quick");
    // the regime
    assert.throws(() => withEnv({ TOOLRL_REGIME: "bogus" }, () => notebookRegime()), /TOOLRL_REGIME="bogus" names no regime \(expected one of strong, instruct/);
    // the results folder: a file, a missing path, a folder of other things
    assert.throws(() => withEnv({ TOOLRL_RESULTS: "/etc/passwd" }, () => notebookResultsRoot()), /^Error: TOOLRL_RESULTS="\/etc\/passwd" is a file, not a folder of results stores/);
    assert.throws(() => withEnv({ TOOLRL_RESULTS: path.join(root, "none") }, () => notebookResultsRoot()), /no such folder/);
    assert.throws(() => withEnv({ TOOLRL_RESULTS: path.join(root, "full", "vanilla-rl") }, () => notebookResultsRoot()), /holds no results store/);
    assert.equal(withEnv({ TOOLRL_RESULTS: root }, () => notebookResultsRoot()), root);
    const empty = path.join(root, "empty");
    fs.mkdirSync(empty);
    assert.equal(withEnv({ TOOLRL_RESULTS: empty }, () => notebookResultsRoot()), empty, "an empty folder is a store root to be");
    assert.equal(withEnv({ TOOLRL_RESULTS: "" }, () => notebookResultsRoot("../data/results")), "../data/results");
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
