// Display-only helpers for the lecture notebooks: chat transcripts and token strips.
//
//   showChatML(text, {title})                 a rendered ChatML string, control tokens highlighted
//   showConversation(messages, {notes})       one block per message (system prompt folded), optional
//                                             note per assistant message (e.g. its structural state)
//   showTokens(tokenizer, text, {title})      the text cut into tokens, each with its id
//
// Like display.ts: rich HTML inside the project's tslab kernel, plain text anywhere else, never a throw.
// Nothing here decides anything about the study; it only lays out what lib/ computed.

import * as fs from "fs";
import * as path from "path";
import type { Message } from "../format/types";
import type { Tokenizer } from "../format/tokenizer";
import { CONTROL_TOKENS, JSON_OPEN } from "../format/tokens";
import { isDefaultResultsRoot, isFinished } from "../experiments/store";
import { showHtml, liveProgress } from "./display";
import { escapeHtml } from "./plotly";

/** Same test as display.ts: tslab's global, or the env var our kernelspec sets. */
function inKernel(): boolean {
  const g = globalThis as { __tslab__?: unknown };
  return g.__tslab__ !== undefined || process.env.TOOLRL_TSLAB_KERNEL === "1";
}

const CSS =
  "<style>" +
  ".toolrl-chat{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px;max-width:980px}" +
  ".toolrl-chat .title{font-family:system-ui,sans-serif;font-weight:600;margin:.3em 0}" +
  ".toolrl-chat pre{white-space:pre-wrap;word-break:break-word;margin:0;padding:6px 8px;background:#fafafa;" +
  "border:1px solid #e4e4e4;border-radius:4px;line-height:1.35}" +
  ".toolrl-chat .ctl{color:#b3261e;background:#fdecea;border-radius:3px;padding:0 2px;font-weight:600}" +
  ".toolrl-chat .msg{margin:4px 0;border-left:4px solid #ccc;padding-left:6px}" +
  ".toolrl-chat .msg.system{border-color:#9e9e9e}.toolrl-chat .msg.user{border-color:#1e88e5}" +
  ".toolrl-chat .msg.assistant{border-color:#43a047}" +
  ".toolrl-chat .role{font-family:system-ui,sans-serif;font-size:12px;color:#555;margin-bottom:2px}" +
  ".toolrl-chat .note{display:inline-block;margin-left:8px;padding:0 6px;border-radius:8px;background:#eee;font-size:11.5px}" +
  ".toolrl-chat .note.healthyCall,.toolrl-chat .note.healthyResponse{background:#e3f4e4;color:#1b5e20}" +
  ".toolrl-chat .note.pollution{background:#fff4d6;color:#8a5a00}" +
  ".toolrl-chat .note.fullCollapse{background:#fdecea;color:#b3261e}" +
  ".toolrl-chat .tok{display:inline-block;margin:2px 2px;padding:1px 3px;border:1px solid #d0d0d0;border-radius:3px;" +
  "background:#fff;white-space:pre;vertical-align:top;text-align:center}" +
  ".toolrl-chat .tok sub{display:block;color:#888;font-size:10px}" +
  ".toolrl-chat .tok.special{border-color:#b3261e;background:#fdecea}" +
  "</style>";

// One capturing group: split() then alternates plain text (even indices) and tags (odd indices).
const CTL_SPLIT = new RegExp(`(${CONTROL_TOKENS.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`);

/** Escape text for HTML and wrap every control tag in a highlight span. */
function highlight(text: string): string {
  return text
    .split(CTL_SPLIT)
    .map((part, i) => (i % 2 === 1 ? `<span class="ctl">${escapeHtml(part)}</span>` : escapeHtml(part)))
    .join("");
}

function titleHtml(title?: string): string {
  return title ? `<div class="title">${escapeHtml(title)}</div>` : "";
}

/** A ChatML (or any) string as a preformatted block, with the control tags highlighted. */
export function showChatML(text: string, opts: { title?: string } = {}): void {
  if (!inKernel()) {
    console.log((opts.title ? `== ${opts.title} ==\n` : "") + text);
    return;
  }
  showHtml(`${CSS}<div class="toolrl-chat">${titleHtml(opts.title)}<pre>${highlight(text)}</pre></div>`);
}

export interface ConversationView {
  title?: string;
  /** One label per ASSISTANT message, in order (e.g. its structural state); shown as a badge. */
  notes?: (string | undefined)[];
  /** Fold the system prompt into a <details> element (default true). */
  foldSystem?: boolean;
}

/** A conversation as one block per message; assistant messages may carry a note (badge). */
export function showConversation(messages: Message[], opts: ConversationView = {}): void {
  const notes = opts.notes ?? [];
  let k = 0;
  const labelled = messages.map((m) => ({ m, note: m.role === "assistant" ? notes[k++] : undefined }));
  if (!inKernel()) {
    const lines = opts.title ? [`== ${opts.title} ==`] : [];
    for (const { m, note } of labelled) lines.push(`[${m.role}${note ? ` | ${note}` : ""}]`, m.content);
    console.log(lines.join("\n"));
    return;
  }
  const blocks = labelled.map(({ m, note }) => {
    const badge = note ? `<span class="note ${escapeHtml(note)}">${escapeHtml(note)}</span>` : "";
    const body = `<pre>${m.content.length ? highlight(m.content) : "<i>(empty message)</i>"}</pre>`;
    if (m.role === "system" && opts.foldSystem !== false) {
      return `<div class="msg system"><details><summary class="role">system (tools and call format; click to open)</summary>${body}</details></div>`;
    }
    return `<div class="msg ${escapeHtml(m.role)}"><div class="role">${escapeHtml(m.role)}${badge}</div>${body}</div>`;
  });
  showHtml(`${CSS}<div class="toolrl-chat">${titleHtml(opts.title)}${blocks.join("")}</div>`);
}

/** `text` cut into tokens by `tokenizer`, each shown with its id (control tokens and `{"` highlighted). */
export function showTokens(tokenizer: Tokenizer, text: string, opts: { title?: string } = {}): void {
  const ids = tokenizer.encode(text);
  const pieces = ids.map((id) => tokenizer.piece(id));
  if (!inKernel()) {
    console.log((opts.title ? `== ${opts.title} ==\n` : "") + pieces.map((p, i) => `${JSON.stringify(p)}:${ids[i]}`).join(" "));
    return;
  }
  const special = new Set<string>([...CONTROL_TOKENS, JSON_OPEN]);
  const boxes = pieces.map((p, i) => {
    const shown = p === "\n" ? "\\n" : p;
    return `<span class="tok${special.has(p) ? " special" : ""}">${escapeHtml(shown)}<sub>${ids[i]}</sub></span>`;
  });
  const head = titleHtml(`${opts.title ? opts.title + ": " : ""}${ids.length} tokens for ${text.length} characters`);
  showHtml(`${CSS}<div class="toolrl-chat">${head}<div>${boxes.join("")}</div></div>`);
}

// ---- results-store views for notebooks 02-12 ---------------------------------------------------
//
//   pickResultsPreset(root, configs)        which committed store a notebook reads: full, else quick
//   openResults(loadResults, root, preset)  load the store; a broken one is reported and read as empty
//   requireRuns(store, configs)             the finished experiments among `configs`; prints how to make the rest
//   subStore(store, configs)                the store restricted to `configs` (for figures.ts / tables.ts)
//   showReportTable(table)                  a tables.ts ReportTable with its notes (HTML, or text outside a kernel)
//   rlSummaryRows(experiments)              one display row per seed of each run's summary.rl
//   shadeSftPhases(figure, records)         grey bands where a run's SFT phases sit on the global-step axis
//
// They only select and lay out what lib/ computed; nothing here changes a number. They are typed
// structurally (no import of results.ts / tables.ts), so notebooks that never read the store do not pay
// for type-checking the experiment runner and danfojs when this file loads.

import { numberField } from "../train/records";
import type { GRPOMetric, MetricRecord } from "../train/records";
import type { PlotlyFigure } from "./plotly";
import { tableHtml, tableText } from "./table";

/** The parts of lib/report/results.ts's ExperimentResults these helpers read. */
export interface ExperimentLike {
  spec: { name: string; label: string };
  seeds: {
    seed: number;
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

/** The parts of lib/report/results.ts's ResultsStore these helpers read. */
export interface StoreLike<E extends ExperimentLike = ExperimentLike> {
  preset: string;
  root: string;
  experiments: E[];
  incomplete: string[];
  unknown: string[];
}

/** The parts of lib/report/tables.ts's ReportTable shown. */
export interface TableLike {
  title: string;
  columns: string[];
  rows: string[][];
  notes: string[];
}

/** The command that fills the store with `configs` (all of the study when omitted). */
export function reproduceCommand(preset: string, root: string, configs?: string[]): string {
  const parts = ["npx toolrl reproduce", `--preset ${preset}`];
  if (!isDefaultResultsRoot(root)) parts.push(`--results ${root}`);
  if (configs && configs.length) parts.push(`--only ${configs.join(",")}`);
  return parts.join(" ");
}

/** Configs of `configs` with no finished seed under root/preset (finished as `reproduce` counts it: isFinished). */
function missingRuns(root: string, preset: string, configs: string[]): string[] {
  return configs.filter((c) => {
    const dir = path.join(root, preset, c);
    return !fs.existsSync(dir) || !fs.readdirSync(dir).some((d) => d.startsWith("seed-") && isFinished(path.join(dir, d)));
  });
}

/**
 * The preset whose store a notebook reads. `TOOLRL_RESULTS_PRESET` decides when set; otherwise the first of
 * `candidates` (default: the paper-shaped `full` store, then the whole study at the `quick` size) that holds
 * every config the notebook compares, else the one that holds most of them. Prints what it chose and why, so
 * a reader knows which size of study the curves come from.
 */
export function pickResultsPreset(root: string, configs: string[], candidates: string[] = ["full", "quick"]): string {
  const forced = process.env.TOOLRL_RESULTS_PRESET;
  if (forced) return forced;
  const missing = candidates.map((p) => missingRuns(root, p, configs));
  const best = missing.reduce((b, m, i) => (m.length < missing[b].length ? i : b), 0);
  const chosen = candidates[best];
  if (best > 0) {
    console.log(`Reading the ${chosen} store: ${root}/${candidates[0]} lacks ${missing[0].join(", ")} ` +
      `(set TOOLRL_RESULTS_PRESET=${candidates[0]} to read it anyway).`);
  }
  return chosen;
}

/**
 * `load(preset, root)` (pass lib/report/results.ts's loadResults), printing a one-line overview. A broken
 * file is reported (with the name loadResults gives it) and the store is read as empty: the notebook goes on.
 */
export function openResults<S extends StoreLike>(load: (preset: string, root: string) => S, root: string, preset: string): S {
  let store: S;
  try {
    store = load(preset, root);
  } catch (e) {
    console.log(`Could not read the results store ${root}/${preset}: ${(e as Error).message}`);
    return { preset, root, experiments: [], incomplete: [], unknown: [], branches: [] } as unknown as S;
  }
  const runs = store.experiments.reduce((a, e) => a + e.seeds.length, 0);
  if (!runs) {
    console.log(`No finished runs under ${root}/${preset}. Run \`${reproduceCommand(preset, root)}\` to create them; ` +
      "the cells that need them print a note and skip.");
  } else {
    console.log(`Results store ${root}/${preset}: ${runs} finished run(s) of ${store.experiments.length} experiment(s)` +
      (store.incomplete.length ? `; not finished: ${store.incomplete.join(", ")}` : ""));
  }
  return store;
}

/** The finished experiments among `configs` (in the order given); prints the command for the missing ones. */
export function requireRuns<E extends ExperimentLike>(store: StoreLike<E>, configs: string[]): E[] {
  const found = configs.map((c) => store.experiments.find((e) => e.spec.name === c)).filter((e): e is E => e !== undefined);
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
  const experiments = configs.map((c) => store.experiments.find((e) => e.spec.name === c)).filter((e): e is E => e !== undefined);
  return { ...store, experiments };
}

/** A ReportTable (lib/report/tables.ts) with its notes, as report.html shows it. */
export function showReportTable(t: TableLike): void {
  const rows = t.rows.map((r) => Object.fromEntries(t.columns.map((c, j) => [c, r[j]])));
  if (!inKernel()) {
    console.log(rows.length ? tableText(rows, { caption: t.title }) : `${t.title}\n(no finished runs)`);
    return;
  }
  const notes = t.notes.length
    ? `<ul style="font-size:12px;color:#555">${t.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`
    : "";
  showHtml(tableHtml(rows.length ? rows : [{ [t.columns[0] ?? "method"]: "(no finished runs)" }], { caption: t.title }) + notes);
}

const pct = (v: number | null | undefined): string => (typeof v === "number" && Number.isFinite(v) ? (v * 100).toFixed(1) : "—");

/**
 * One row per seed: the RL summary each run wrote (lib/experiments/summary.ts), in percent. Its collapse step is
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
      rows.push({
        method: e.spec.label,
        seed: s.seed,
        "RL steps": rl.steps,
        "peak val %": pct(rl.peakValAccuracy),
        "peak at": rl.peakStep ?? "—",
        "final val %": pct(rl.finalValAccuracy),
        "collapse step (vs own peak)": rl.collapseStep ?? "none",
        "final reward %": pct(rl.finalReward),
        "healthy call %": pct(rl.finalStates.healthyCall),
        "healthy response %": pct(rl.finalStates.healthyResponse),
        "pollution %": pct(rl.finalStates.pollution),
        "full collapse %": pct(rl.finalStates.fullCollapse),
        "p(<|im_end|>)": rl.finalProbe.pImEnd.toFixed(3),
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
    annotations.push({ xref: "x", yref: "paper", x: (a + b) / 2, y: 1, yanchor: "bottom", text: label, showarrow: false,
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
