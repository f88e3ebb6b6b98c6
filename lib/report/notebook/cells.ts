/**
 * The markdown cells every results notebook repeats, written once: the "## Setup" cell (which results store the
 * notebook reads and how to choose another) and the "### ⚑ The RETRAIN flag" cell before the only cell that trains.
 * `npm run notebooks` (scripts/sync-notebooks.ts) writes them into notebooks/*.ipynb; test/notebooks.cells.test.ts
 * fails when a notebook's copy differs, so a change here reaches every notebook or none.
 *
 * The RETRAIN cell names the configs of the notebook's own `retrainCell([...])` call, read from its code, so the
 * text and the call cannot disagree; what only one notebook needs to say is its note below.
 */

export const SETUP_HEADING = '## Setup';
export const RETRAIN_HEADING = '### ⚑ The RETRAIN flag';

/** The Setup cell of the notebooks that read a results store; `extra` is a notebook's own paragraph after it. */
export function setupMarkdown(extra?: string): string {
  return [
    SETUP_HEADING,
    '',
    'One import cell: tslab type-checks the library once, here, so it stays silent for about half a minute (24-37 s',
    'on a two-core machine). The **results store** is where',
    '`npx toolrl reproduce` writes every run: `data/results/<store>/<config>/seed-<n>/{run.json, metrics.jsonl,',
    'summary.json}`, one store per preset and regime (`full` and `quick` from the strong base, `full-instruct` and',
    'the pipeline study\'s `pipeline-instruct` from the instruct base). Three environment variables choose the ' +
      'store: `TOOLRL_RESULTS` (the root folder, default',
    '`data/results`), `TOOLRL_REGIME` (`strong`, the default, or `instruct`: which base the study started from,',
    'lib/experiments/registry/regimes.ts) and `TOOLRL_RESULTS_PRESET` (the preset). Without the last, the notebook ' +
      'reads the',
    '`full` store of the regime when it holds every run compared here, else the `quick` one if it holds more of them',
    '(`pickResultsPreset`), and `openResults` prints which store it read and what that store lacks. When a run the',
    'notebook needs is missing, its cells print the command that creates it and skip; nothing here throws.',
    ...(extra ? ['', extra] : []),
  ].join('\n');
}

/** The configs of a notebook's `retrainCell([...])` call, or null when it has none. */
export function retrainConfigs(code: string): string[] | null {
  const m = /retrainCell\(\[([^\]]*)\]/.exec(code);
  if (!m) return null;
  return Array.from(m[1].matchAll(/"([^"]+)"/g), (x) => x[1]);
}

/** The RETRAIN cell for a notebook whose retrain call lists `configs`; `note` is the notebook's own last sentence. */
export function retrainMarkdown(configs: string[], note?: string): string {
  const list = configs.map((c) => `\`${c}\``).join(', ');
  return [
    RETRAIN_HEADING,
    '',
    '**This is the only cell that trains.** By default it trains nothing and every cell reads the results store above.',
    'Start Jupyter with `TOOLRL_RETRAIN=1` (or pass `{ enabled: true }` as its second argument) and `retrainCell`',
    `(\`lib/report/notebook/retrain.ts\`) runs ${list} at the preset \`TOOLRL_PRESET\` in the regime ` +
      '`TOOLRL_REGIME`,',
    'seed 1, into `runs/notebook/<store>/<config>/seed-1`, and prints how long each run took. The default preset,',
    '`class` (16 RL steps of 4 prompts, lib/experiments/registry/presets.ts), is sized for a lesson: ' +
      '`vanilla-rl-lr1e-3` took',
    '6.3 min on the default wasm backend in a fresh clone and 1.5 min on the native one of a two-core machine ' +
      '(README, "The notebooks");',
    '`quick` is about three times longer, `full` hours, `smoke` seconds (it learns nothing).',
    '**Every later cell then reads that folder instead**. A config that starts from another run (e.g. `fcl-sft-rl` ' +
      'from',
    '`fcl-sft`) needs it earlier in the list; comparisons that were not retrained are reported missing (add them).',
    '',
    'Each run draws a live chart (reward, the probe\'s p(`<|im_end|>`), the full-collapse share, validation accuracy)',
    'that updates in JupyterLab while it trains; the terminal that runs Jupyter shows the progress bars. It needs the',
    'regime\'s base checkpoint (`data/checkpoints/base` or `data/checkpoints/instruct`, notebook 01).' +
      (note ? ` ${note}` : ''),
  ].join('\n');
}

/** What only one notebook says in its generated cells, by notebook file name. */
export const NOTEBOOK_NOTES: Record<string, { setup?: string; retrain?: string }> = {
  '03-why-it-collapses.ipynb': { retrain: 'The learning-rate sweep of section 3 is not retrained: add ' +
    '`"vanilla-rl-lr1e-4"` etc. to the list for that.' },
  '04-capability-intact.ipynb': {
    setup: 'The evaluation calls `runEval` from lib/cli/eval.ts, ' +
      'the function behind `npx toolrl eval --checkpoint DIR\n' +
      '[--constrained] --limit N`: the table below is exactly what that command prints.',
    retrain: 'Here it is the way to get a collapsed checkpoint: the run\'s `checkpoint/` folder stays on disk.',
  },
  '05-sft-baselines.ipynb': { retrain: 'The live chart only has RL steps, so it stays empty during the SFT run.' },
  '08-ets.ipynb': { retrain: 'The live chart counts RL steps only: the SFT phases happen between its points.' },
  '09-prs.ipynb': { retrain: 'A retrained run also leaves its step records (`rollouts.jsonl`), so section 1 then ' +
    'judges a real rollout.' },
  '11-ood.ipynb': { retrain: 'Their summaries carry every evaluation split.' },
  '12-ablation-tables.ipynb': { retrain: 'For the whole study use `npx toolrl reproduce` instead (hours).' },
};

/** A notebook's cells as far as these helpers read them. */
export interface CellLike { cell_type: string; source: string | string[] }

const text = (c: CellLike) => (Array.isArray(c.source) ? c.source.join('') : c.source);

/**
 * The generated text each cell of `cells` should hold, by index: the Setup cell (when the notebook calls
 * pickResultsPreset) and the RETRAIN cell (when it calls retrainCell). Cells of other notebooks are left alone.
 */
export function expectedCells(name: string, cells: CellLike[]): Map<number, string> {
  const code = cells.filter((c) => c.cell_type === 'code').map(text).join('\n');
  const notes = NOTEBOOK_NOTES[name] ?? {};
  const out = new Map<number, string>();
  const configs = retrainConfigs(code);
  cells.forEach((c, i) => {
    if (c.cell_type !== 'markdown') return;
    const t = text(c);
    if (t.startsWith(SETUP_HEADING + '\n') && code.includes('pickResultsPreset(')) out.set(i,
      setupMarkdown(notes.setup));
    if (t.startsWith(RETRAIN_HEADING + '\n') && configs) out.set(i, retrainMarkdown(configs, notes.retrain));
  });
  return out;
}

/** `text` as Jupyter stores a cell's source: one string per line, each but the last ending in a newline. */
export function toSource(s: string): string[] {
  const lines = s.split('\n');
  return [...lines.slice(0, -1).map((l) => l + '\n'), lines[lines.length - 1]];
}
