// Results-store views for notebooks 02-12:
//
//   notebookRegime()                         TOOLRL_REGIME: which base the study started from (strong | instruct)
//   notebookResultsRoot()                    TOOLRL_RESULTS: the folder of results stores (default data/results)
//   pickResultsPreset(root, configs)        which committed store a notebook reads: full, else quick, in that regime
//   openResults(loadResults, root, store)   load the store, say which it is and what it lacks; a broken one reads as
// empty
//   requireRuns(store, configs)             the finished experiments among `configs`; prints how to make the rest
//   subStore(store, configs)                the store restricted to `configs` (for figures.ts / tables.ts)
//   showReportTable(table)                  a tables.ts ReportTable with its notes (HTML, or text outside a kernel)
//   rlSummaryRows(experiments)              one display row per seed of each run's summary.rl
//   shadeSftPhases(figure, records)         grey bands where a run's SFT phases sit on the global-step axis
//
// They only select and lay out what lib/ computed; nothing here changes a number. They are typed
// structurally (no import of results.ts / tables.ts), so notebooks that never read the store do not pay
// for type-checking the experiment runner and danfojs when this file loads.

import * as fs from "fs";
import * as path from "path";
import { isDefaultResultsRoot, isFinished } from "../../experiments/store/folder";
import { escapeHtml } from "../figures/plotly";
import { inTslabKernel as inKernel, showHtml, liveProgress } from "./display";

import { numberField } from "../../train/records";
import type { GRPOMetric, MetricRecord } from "../../train/records";
import type { PlotlyFigure } from "../figures/plotly";
import { OUTPUT_WIDTH_PX, fitColumns, tableHtml, tableText } from "../render/rows";
import { DEFAULT_REGIME, REGIMES, RegimeName, getRegime } from "../../experiments/registry/regimes";
import { PRESETS, getStorePreset, studyGroups } from "../../experiments/registry/presets";
import type { Preset } from "../../experiments/registry/presets";
import { lateStates } from "../store/samples";

/** The parts of lib/report/store/results.ts's ExperimentResults these helpers read. */
export interface ExperimentLike {
  spec: { name: string; label: string };
  seeds: {
    seed: number;
    /**
     * The run folder and its records, when read from a store: the late messages' states come from its rollout sample.
     */
    dir?: string;
    metrics?: MetricRecord[];
    summary: {
      eval: { id?: { mean: number } };
      rl: null | {
        steps: number; peakValAccuracy: number; peakStep: number | null; finalValAccuracy: number;
        collapseStep: number | null; finalReward: number; finalStates: Record<string, number>;
        finalProbe: { pImEnd: number };
      };
    };
  }[];
}

/** The parts of lib/report/store/results.ts's ResultsStore these helpers read. */
export interface StoreLike<E extends ExperimentLike = ExperimentLike> {
  preset: string;
  root: string;
  experiments: E[];
  incomplete: string[];
  unknown: string[];
}

/** The parts of lib/report/tables/base.ts's ReportTable shown. */
export interface TableLike {
  title: string;
  columns: string[];
  rows: string[][];
  notes: string[];
}

/** The regime (and so the base) of the study a notebook reads: TOOLRL_REGIME, default strong. */
export function notebookRegime(): RegimeName {
  const v = process.env.TOOLRL_REGIME;
  if (v === undefined || v === "") return DEFAULT_REGIME;
  if (!(REGIMES as string[]).includes(v)) {
    throw new Error(`TOOLRL_REGIME="${v}" names no regime (expected one of ${REGIMES.join(", ")}; ` +
      `lib/experiments/registry/regimes.ts)`);
  }
  return v as RegimeName;
}

/** Whether `dir` is laid out as a results store: <config>/seed-<n>/ folders. */
function looksLikeStore(dir: string): boolean {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).some((c) => c.isDirectory() &&
      fs.readdirSync(path.join(dir, c.name)).some((s) => /^seed-\d+$/.test(s)));
  } catch {
    return false;
  }
}

/** The store folders under `root`: named after a preset and regime, or laid out as a store. */
export function storeFolders(root: string): string[] {
  if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) return [];
  return fs.readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory() &&
    (storeFlags(e.name) !== null || looksLikeStore(path.join(root, e.name)))).map((e) => e.name).sort();
}

/**
 * The folder of results stores a notebook reads: TOOLRL_RESULTS, else `fallback` (data/results). A value that is not
 * such a folder (a file, a missing path, a folder of other things) is refused in one line: a typo must not read as
 * "no finished runs".
 */
export function notebookResultsRoot(fallback = "data/results"): string {
  const v = process.env.TOOLRL_RESULTS;
  if (v === undefined || v === "") return fallback;
  const what = `TOOLRL_RESULTS="${v}"`;
  if (!fs.existsSync(v)) throw new Error(`${what}: no such folder (expected a folder of results stores, like ` +
    `data/results)`);
  if (!fs.statSync(v).isDirectory()) throw new Error(`${what} is a file, not a folder of results stores (like ` +
    `data/results)`);
  if (fs.readdirSync(v).length > 0 && storeFolders(v).length === 0) {
    throw new Error(`${what} holds no results store (folders such as full, full-instruct or quick, each with ` +
      "<config>/seed-<n>/ runs): point it at the folder `npx toolrl reproduce --results` wrote");
  }
  return v;
}

/** The store folder of `preset` in `regime`: "full", "full-instruct". A name that already is a store folder stays. */
export function storeName(preset: string, regime: RegimeName = notebookRegime()): string {
  if (!(PRESETS as string[]).includes(preset)) return preset;
  return preset + getRegime(regime).storeSuffix;
}

/** The preset and regime flags of a store folder name, or null for a folder named otherwise (a scratch store). */
function storeFlags(store: string): { preset: string; regime: string } | null {
  try {
    const p = getStorePreset(store);
    return { preset: p.name, regime: p.regime.name };
  } catch {
    return null;
  }
}

/** The command that fills the store with `configs` (all of the study when omitted). */
export function reproduceCommand(store: string, root: string, configs?: string[]): string {
  const flags = storeFlags(store);
  const parts = ["npx toolrl reproduce", `--preset ${flags?.preset ?? store}`];
  if (flags && flags.regime !== DEFAULT_REGIME) parts.push(`--regime ${flags.regime}`);
  if (!isDefaultResultsRoot(root)) parts.push(`--results ${root}`);
  if (configs && configs.length) parts.push(`--only ${configs.join(",")}`);
  return parts.join(" ");
}

/** Configs of `configs` with no finished seed under root/store (finished as `reproduce` counts it: isFinished). */
function missingRuns(root: string, store: string, configs: string[]): string[] {
  return configs.filter((c) => {
    const dir = path.join(root, store, c);
    return !fs.existsSync(dir) || !fs.readdirSync(dir).some((d) => d.startsWith("seed-") &&
      isFinished(path.join(dir, d)));
  });
}

/**
 * The store a notebook reads (a folder under the results root). `TOOLRL_RESULTS_PRESET` decides when set (a preset,
 * put in the regime, or a folder name as it is); otherwise the first of `candidates` (default: the paper-shaped `full`
 * store, then the whole study at the `quick` size) in the regime `TOOLRL_REGIME` that holds every config the notebook
 * compares, else the one that holds most of them. Prints what it chose when that is not the first candidate.
 */
export function pickResultsPreset(root: string, configs: string[], candidates: string[] = ["full", "quick"]): string {
  const regime = notebookRegime();
  const forced = process.env.TOOLRL_RESULTS_PRESET;
  if (forced) {
    // a preset (put in the regime), or the name of a store folder under root as it is; anything else is a typo
    const stores = storeFolders(root);
    if (!(PRESETS as string[]).includes(forced) && !stores.includes(forced)) {
      throw new Error(`TOOLRL_RESULTS_PRESET="${forced}" names no preset (${PRESETS.join(", ")}) and no store ` +
        `under ${root} (${stores.length ? stores.join(", ") : "it holds none"})`);
    }
    return storeName(forced, regime);
  }
  const stores = candidates.map((c) => storeName(c, regime));
  const missing = stores.map((p) => missingRuns(root, p, configs));
  const best = missing.reduce((b, m, i) => (m.length < missing[b].length ? i : b), 0);
  const chosen = stores[best];
  if (best > 0) {
    console.log(`Reading the ${chosen} store: ${root}/${stores[0]} lacks ${missing[0].join(", ")} ` +
      `(set TOOLRL_RESULTS_PRESET=${candidates[0]} to read it anyway).`);
  }
  return chosen;
}

/**
 * A registry entry as openResults reads it: name and report group (lib/experiments/registry/configs.ts
 * listExperiments()).
 */
export interface ExpectedRun { name: string; group: string }

/**
 * What a store of a known preset and regime lacks: the configs of its study (presets.ts studyGroups) with no
 * finished seed, and those with fewer seeds than the preset runs. Empty lists for a store of another name.
 */
export function storeGaps(store: StoreLike,
  expected: ExpectedRun[]): { missing: string[]; fewerSeeds: string[]; seeds: number } {
  let preset: Preset;
  try {
    preset = getStorePreset(store.preset);
  } catch {
    return { missing: [], fewerSeeds: [], seeds: 0 };
  }
  const want = expected.filter((e) => studyGroups(preset).includes(e.group)).map((e) => e.name);
  const have = new Map(store.experiments.map((e) => [e.spec.name, e.seeds.length]));
  return {
    missing: want.filter((n) => !have.has(n)),
    fewerSeeds: want.filter((n) => have.has(n) && (have.get(n) as number) < preset.seeds.length),
    seeds: preset.seeds.length,
  };
}

/**
 * `load(store, root)` (pass lib/report/store/results.ts's loadResults), printing which store it is (folder, regime,
 * base)
 * and how complete. With `expected` (pass listExperiments()), a partial store also lists what it lacks, so every
 * later "missing" is explained up front. A broken file is reported (with the name loadResults gives it) and the store
 * is read as empty: the notebook goes on.
 */
export function openResults<S extends StoreLike>(load: (store: string, root: string) => S, root: string, store: string,
  expected?: ExpectedRun[]): S {
  let s: S;
  try {
    s = load(store, root);
  } catch (e) {
    console.log(`Could not read the results store ${root}/${store}: ${(e as Error).message}`);
    return { preset: store, root, experiments: [], incomplete: [], unknown: [], branches: [] } as unknown as S;
  }
  const flags = storeFlags(store);
  const regime = flags ? `, regime ${flags.regime} (base ${getRegime(flags.regime).base})` : "";
  const runs = s.experiments.reduce((a, e) => a + e.seeds.length, 0);
  if (!runs) {
    console.log(`No finished runs under ${root}/${store}${regime}. ` +
      `Run \`${reproduceCommand(store, root)}\` to create them; ` +
      "the cells that need them print a note and skip.");
    return s;
  }
  console.log(`Reading the results store ${root}/${store}${regime}: ` +
    `${runs} finished run(s) of ${s.experiments.length} experiment(s)` +
    (s.incomplete.length ? `; not finished: ${s.incomplete.join(", ")}` : "") + ".");
  if (expected) {
    const gaps = storeGaps(s, expected);
    if (gaps.missing.length || gaps.fewerSeeds.length) {
      console.log(`This store is partial: ` +
        (gaps.missing.length ? `no finished run of ${gaps.missing.join(", ")}` : "") +
        (gaps.missing.length && gaps.fewerSeeds.length ? "; " : "") +
        (gaps.fewerSeeds.length ? `fewer than ${gaps.seeds} seeds: ${gaps.fewerSeeds.join(", ")}` : "") +
        `. \`${reproduceCommand(store, root)}\` runs what is missing.`);
    }
  }
  return s;
}

/** The finished experiments among `configs` (in the order given); prints the command for the missing ones. */
export function requireRuns<E extends ExperimentLike>(store: StoreLike<E>, configs: string[]): E[] {
  const found = configs.map((c) => store.experiments.find((e) => e.spec.name === c)).filter((e): e is E =>
    e !== undefined);
  const missing = configs.filter((c) => !found.some((e) => e.spec.name === c));
  if (missing.length) {
    console.log(`Missing in ${store.root}/${store.preset}: ${missing.join(", ")}. ` +
      `Create with \`${reproduceCommand(store.preset, store.root, missing)}\`` +
      (found.length ? "; showing what is there." : "; skipping this cell."));
  }
  return found;
}

/** `store` with only the experiments named in `configs`, in the order given. */
export function subStore<S extends StoreLike>(store: S, configs: string[]): S {
  type E = S["experiments"][number];
  const experiments = configs.map((c) => store.experiments.find((e) => e.spec.name === c)).filter((e): e is E =>
    e !== undefined);
  return { ...store, experiments };
}

/** A ReportTable (lib/report/tables/base.ts) with its notes, as report.html shows it. */
export function showReportTable(table: TableLike): void {
  if (inKernel()) return showHtml(reportTableHtml(table));
  const t = fitColumns(table);
  const rows = tableRows(t);
  console.log(rows.length ? tableText(rows, { caption: t.title }) : `${t.title}\n(no finished runs)`);
}

/**
 * The HTML a notebook shows for a ReportTable: constant columns moved into the notes (`fitColumns`), parts no wider
 * than the output area, the notes below. test/browser.tables.test.ts draws it in Chromium to check that it fits.
 */
export function reportTableHtml(table: TableLike): string {
  const t = fitColumns(table);
  const rows = tableRows(t);
  const notes = t.notes.length
    ? `<ul style="font-size:12px;color:#555">${t.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`
    : "";
  return tableHtml(rows.length ? rows : [{ [t.columns[0] ?? "method"]: "(no finished runs)" }],
    { caption: t.title, maxWidth: OUTPUT_WIDTH_PX }) + notes;
}

/** A table's rows as objects keyed by column, the input tableHtml and tableText take. */
export const tableRows = (t: TableLike) => t.rows.map((r) => Object.fromEntries(t.columns.map((c, j) => [c, r[j]])));

/**
 * As stats.ts formatProbability (not imported: stats.ts loads danfojs): "4.1e-3" below 0.01, never a column of 0.000.
 */
const probability = (p: number): string => (p < 0.01 ? p.toExponential(1) : p.toFixed(2));

const pct = (v: number | null | undefined): string => (typeof v === "number" && Number.isFinite(v) ?
  (v * 100).toFixed(1) : "—");

/**
 * One row per seed: the RL summary each run wrote (lib/experiments/run/summary.ts), in percent. Its collapse step is
 * measured against the run's own validated peak; the report's tables measure it against the higher of that peak
 * and the base checkpoint's accuracy (tables.ts `collapseVsStart`), so a run already down at its first validation
 * collapses there in the tables and may read "none" here. The column says which.
 */
export function rlSummaryRows(exps: ExperimentLike[]): Record<string, string | number>[] {
  const rows: Record<string, string | number>[] = [];
  for (const e of exps) {
    for (const s of e.seeds) {
      const rl = s.summary.rl;
      if (!rl) {
        rows.push({ method: e.spec.label, seed: s.seed, "RL steps": 0, "ID eval %": pct(s.summary.eval.id?.mean) });
        continue;
      }
      const late = s.dir !== undefined && s.metrics !== undefined ?
        lateStates({ dir: s.dir, metrics: s.metrics }) : null;
      rows.push({
        method: e.spec.label,
        seed: s.seed,
        "RL steps": rl.steps,
        "peak val %": pct(rl.peakValAccuracy),
        "peak at": rl.peakStep ?? "—",
        "final val %": pct(rl.finalValAccuracy),
        "collapse step (vs own peak)": rl.collapseStep ?? "none",
        "final reward %": pct(rl.finalReward),
        "late healthy call %": pct(late?.healthyCall),
        "late healthy response %": pct(late?.healthyResponse),
        "late pollution %": pct(late?.pollution),
        "late full collapse %": pct(late?.fullCollapse),
        "p(<|im_end|>)": probability(rl.finalProbe.pImEnd),
        "ID eval %": pct(s.summary.eval.id?.mean),
      });
    }
  }
  return rows;
}

/**
 * Grey bands over the global steps of a run's SFT records (phase 'sft'): where the interleaved schemes
 * (and the collapse guard) left RL for supervised steps. Returns the same figure, for chaining.
 */
export function shadeSftPhases(fig: PlotlyFigure, records: MetricRecord[], label = "SFT"): PlotlyFigure {
  const xTitle = (fig.layout.xaxis as { title?: { text?: string } } | undefined)?.title?.text ?? "";
  if (xTitle.startsWith("RL step")) {
    throw new Error("shadeSftPhases: this figure counts RL steps (SFT phases left out), so SFT bands would sit at " +
      "the wrong steps; draw it with { axis: 'global' }");
  }
  const steps = records.filter((r) => r.phase === "sft" && typeof r.globalStep === "number")
    .map((r) => r.globalStep as number).sort((a, b) => a - b);
  const bands: [number, number][] = [];
  for (const s of steps) {
    const last = bands[bands.length - 1];
    if (last && s <= last[1] + 1) last[1] = s;
    else bands.push([s, s]);
  }
  const shapes = ((fig.layout.shapes as unknown[] | undefined) ?? []).slice();
  const annotations = ((fig.layout.annotations as unknown[] | undefined) ?? []).slice();
  for (const [a, b] of bands) {
    shapes.push({ type: "rect", xref: "x", yref: "paper", x0: a - 0.5, x1: b + 0.5, y0: 0, y1: 1,
      fillcolor: "rgba(120,120,120,0.15)", line: { width: 0 }, layer: "below" });
    annotations.push({ xref: "x", yref: "paper", x: (a + b) / 2, y: 1, yanchor: "top", text: label, showarrow: false,
      font: { size: 10, color: "#666" } });
  }
  fig.layout.shapes = shapes;
  fig.layout.annotations = annotations;
  return fig;
}

/**
 * liveProgress (display.ts) wired for runExperiment's `onStep`: one chart per run of `metrics` over the RL
 * steps of all its stages, counted 1, 2, 3, ... (the records' own `step` restarts at each RL stage).
 * runExperiment yields between steps, so the chart updates in the browser while the run trains.
 */
export function liveRunProgress(title: string, metrics: string[] = ["reward", "pImEnd", "fullCollapse", "valAccuracy"]):
  { onStep: (rec: GRPOMetric) => void; done: () => void } {
  const live = liveProgress({ title, metrics, xTitle: "RL step (all stages)" });
  let n = 0;
  return {
    onStep: (rec: GRPOMetric) => {
      const values: Record<string, number> = {};
      for (const m of metrics) {
        const v = numberField(rec, m);
        if (v !== undefined) values[m] = v;
      }
      live.update(++n, values);
    },
    done: () => live.done(),
  };
}
