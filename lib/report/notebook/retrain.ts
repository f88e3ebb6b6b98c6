// The one notebook cell that trains, shared by notebooks 02-12.
//
//   const retrained = await retrainCell(["vanilla-rl", "ops"]);
//   if (retrained) store = retrained;
//
// Off by default: the notebooks read the committed results store, and the cell only says so (and returns
// null). With TOOLRL_RETRAIN=1 in Jupyter's environment (or `{ enabled: true }`), it runs each listed config
// at the preset TOOLRL_PRESET (default class: minutes; smoke takes seconds and learns nothing) in the regime
// TOOLRL_REGIME (default strong: the base every config starts from), seed 1, into a results store of its own
// (runs/notebook/<store>/<config>/seed-1, <store> = the preset's folder in that regime, e.g. quick-instruct), draws a
// live chart per run, and returns that store, so every later cell of the notebook shows the fresh runs instead of the
// committed ones.
// (The cell ends with an `if`, not an assignment: tslab would print the value of a final expression.)
//
// It lives apart from notebook.ts because it pulls in the experiment runner (and with it tfjs and every
// stage of training); notebooks that only read the store do not pay for type-checking that.

import * as fs from "fs";
import * as path from "path";
import { initBackend } from "../../backend";
import { getExperiment } from "../../experiments/registry/configs";
import { getPreset } from "../../experiments/registry/presets";
import { resultsDir, runExperiment } from "../../experiments/run/runner";
import { loadResults, ResultsStore } from "../store/results";
import { liveRunProgress, notebookRegime, openResults } from "./views";

export interface RetrainOptions {
  /** Train at all (default: the environment variable TOOLRL_RETRAIN is "1"). */
  enabled?: boolean;
  /** Preset of the runs (default: TOOLRL_PRESET, else "class", the live collapse of a classroom). */
  preset?: string;
  /** Results root the runs are written to (default "runs/notebook", git-ignored). */
  root?: string;
  seed?: number;
  /** The regime (default: TOOLRL_REGIME, else strong): which base the configs start from. */
  regime?: string;
  /**
   * Checked before training: the configs start from it, directly or through another config (default: the regime's
   * base).
   */
  baseCheckpoint?: string;
}

/** Whether the notebooks train: TOOLRL_RETRAIN=1 in the kernel's environment. */
export function retrainRequested(): boolean {
  return process.env.TOOLRL_RETRAIN === "1";
}

/**
 * Runs `configs` in order (a config that starts from another's checkpoint, like fcl-sft-rl after fcl-sft,
 * must come after it) and returns the store of the fresh runs; returns null, with a one-line note, when
 * training is off or the base checkpoint is missing. The runs' RL steps stream to one live chart each
 * (reward, p(<|im_end|>), full-collapse share, validation accuracy).
 */
export async function retrainCell(configs: string[], opts: RetrainOptions = {}): Promise<ResultsStore | null> {
  const enabled = opts.enabled ?? retrainRequested();
  const preset = opts.preset ?? process.env.TOOLRL_PRESET ?? "class";
  const root = opts.root ?? "runs/notebook";
  const seed = opts.seed ?? 1;
  if (!enabled) {
    console.log(`RETRAIN is off: the cells below read the results store opened above. ` +
      `Start Jupyter with TOOLRL_RETRAIN=1 to run ${configs.join(", ")} here.`);
    return null;
  }
  // Fail on a misspelt name, preset or regime before any run starts, not after the first one finished.
  const specs = configs.map((c) => getExperiment(c));
  const p = getPreset(preset, opts.regime ?? notebookRegime());
  const base = opts.baseCheckpoint ?? p.regime.base;
  if (!fs.existsSync(path.join(base, "model.json"))) {
    console.log(`RETRAIN needs ${base} (build it with \`npx toolrl run --config ${p.regime.baseConfig} --preset ` +
      `quick\`, ` +
      `see ${base}/README.md); nothing trained.`);
    return null;
  }
  console.log(`backend ${await initBackend()}`);
  for (const spec of specs) {
    const live = liveRunProgress(`${spec.name} (${p.store}, seed ${seed})`);
    // `await` keeps this right whether the runner returns its summary or a promise of it.
    const summary = await runExperiment(spec, {
      preset: p, seed, out: resultsDir(p.store, spec.name, seed, root), progress: true, onStep: live.onStep,
        force: true,
    });
    live.done();
    console.log(`${spec.name}: ${summary.seconds.toFixed(0)} s, ID mean accuracy ` +
      `${summary.eval.id?.mean.toFixed(3) ?? "n/a"}`);
  }
  return openResults(loadResults, root, p.store);
}
