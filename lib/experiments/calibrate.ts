/**
 * Calibration of a starting policy before any RL (docs/design.md B, "Calibration").
 *
 * GRPO learns only from groups whose rewards differ: with group-normalised advantages (r - mean) / (std + eps),
 * a group that all fails or all succeeds gives every token an advantage of 0. So before a base checkpoint is
 * used, we measure what RL will see:
 *   - sampled success at temperature 1 on training tasks, in groups of `groupSize`, and the share of groups
 *     with mixed rewards (signal), all-fail and all-success (no signal). With a share p of mixed groups, a step
 *     of P prompts has no signal at all with probability (1 - p)^P;
 *   - the pass rate of user turns by their number of ground-truth calls (which turns are hard);
 *   - argument-value accuracy under teacher forcing (argmax on the tokens of argument values): the typical
 *     failure of a weak base is a wrong value, not copied from the user's message;
 *   - the mean entropy of the sampled tokens (estimated as the mean of -log p of the sampled token, which is
 *     the entropy in expectation at temperature 1);
 *   - the probe after `<tool_call>\n` with its top-5 tokens (what competes with `{"` there);
 *   - greedy accuracy on ID, format-OOD and content-OOD.
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../prng';
import { GPT } from '../model/gpt';
import { Tokenizer } from '../format/tokenizer';
import { Task } from '../envs/task';
import { Episode } from '../envs/episode';
import { teacherTrajectory } from '../envs/teacher';
import { encodeConversation, TrainingSequence } from '../train/encode';
import { padBatch } from '../train/batch';
import { rollout } from '../train/rollout';
import { Trajectory } from '../train/trajectory';
import { evaluateModel } from '../train/evaluate';
import { groupShares } from '../train/grpo/advantages';
import { probeContexts, runProbe, ProbeResult } from '../diagnostics/probe';
import { attemptsCall } from '../format/states';
import { CalibrationTargets, REGIME_TABLE } from './registry/regimes';
import { PRESET_TABLE } from './registry/presets';

export interface CalibrationConfig {
  /** Training tasks sampled (balanced over categories). The calibration targets are read on >= 120. */
  tasks: number;
  /** Rollouts per task; 8 in the paper's GRPO script (docs/design.md A.4). */
  groupSize: number;
  /** Sampling temperature; 1.0 as in the paper's GRPO rollouts. */
  temperature: number;
  /** Test tasks per category for the greedy evaluations; 0 = all. */
  evalPerCategory: number;
  /** Tasks rolled out together (rows of one KV cache). */
  batchTasks: number;
  seed: number;
}

export { groupShares };

export const defaultCalibrationConfig: CalibrationConfig = {
  tasks: 120, groupSize: 8, temperature: 1.0, evalPerCategory: 0, batchTasks: 8, seed: 1,
};

export interface CalibrationReport {
  config: CalibrationConfig;
  sampled: {
    tasks: number;
    trajectories: number;
    success: number;
    /** Shares of groups: rewards mixed (signal), all 0, all 1. */
    mixedGroups: number;
    allFailGroups: number;
    allSuccessGroups: number;
    /** P(a step of P prompts has no mixed group) = (1 - mixedGroups)^P, for a few P. */
    noSignalStep: Record<string, number>;
    perCategory: Record<string, number>;
    /** Pass rate of the user turns that were reached, keyed by the turn's number of ground-truth calls. */
    turnPassByCalls: Record<string, { n: number; pass: number }>;
    entropy: number;
  };
  argumentValues: { tokens: number; tokenAccuracy: number; calls: number; callAccuracy: number };
  probe: ProbeResult;
  greedy: {
    id: number; formatOod: number; contentOod: number; idPerCategory: Record<string, number>;
    /**
     * Healthy calls among the greedy ID messages that try to call a tool (format/states.ts, attemptsCall): does
     * the base know the call format? (Empty messages and plain replies are not tool messages.)
     */
    toolSyntax: number;
    /** Shares of the greedy ID messages: tool messages (attempted calls) and empty ones. */
    toolMessages: number;
    emptyMessages: number;
  };
  /** The targets checked (a regime's, lib/experiments/registry/regimes.ts) and whether each is met. */
  targets: Record<string, { value: number; target: string; met: boolean }>;
  seconds: number;
}

/** Up to `n` tasks, balanced over the categories present, in file order within each. */
export function balancedTasks(tasks: readonly Task[], n: number): Task[] {
  const byCat = new Map<string, Task[]>();
  for (const t of tasks) byCat.set(t.category, [...(byCat.get(t.category) ?? []), t]);
  const out: Task[] = [];
  for (let i = 0; out.length < n; i++) {
    let added = false;
    for (const list of byCat.values()) {
      if (i < list.length && out.length < n) { out.push(list[i]); added = true; }
    }
    if (!added) break;
  }
  return out;
}

/**
 * Positions of argument-value tokens in a tokenized assistant call: after `"arguments"`, a token is a value token
 * when it follows a key's `": "` / `": ` and precedes the delimiter that ends the value. Returned as indexes
 * into `pieces`, grouped per call.
 */
export function argumentValueSpans(pieces: string[]): number[][] {
  const ENDS = new Set(['", "', '"}}', '"}', '}}', ', "', '}', '"]']);
  const calls: number[][] = [];
  let inArgs = false;
  let inValue = false;
  let cur: number[] = [];
  pieces.forEach((p, i) => {
    if (p === 'arguments') { inArgs = true; cur = []; return; }
    if (!inArgs) return;
    if (p === '</tool_call>' || p === '<|im_end|>') {
      if (cur.length) calls.push(cur);
      inArgs = inValue = false;
      return;
    }
    if (inValue) {
      if (ENDS.has(p)) inValue = false;
      else cur.push(i);
    } else if ((p === '": "' || p === '": ') && i > 0 && pieces[i - 1] !== 'arguments') {
      inValue = true;
    }
  });
  return calls;
}

/** Teacher-forced argmax accuracy on argument-value tokens of the teacher conversations of `tasks`. */
export function argumentValueAccuracy(model: GPT, tokenizer: Tokenizer, tasks: readonly Task[], batch = 16):
  { tokens: number; tokenAccuracy: number; calls: number; callAccuracy: number } {
  const seqs: TrainingSequence[] = tasks.map((t) => encodeConversation(tokenizer, teacherTrajectory(t)));
  let tokens = 0, right = 0, calls = 0, callsRight = 0;
  const maxLen = model.config.blockSize;
  for (let s = 0; s < seqs.length; s += batch) {
    const group = seqs.slice(s, s + batch);
    const b = padBatch(group, maxLen);
    const pred = tf.tidy(() => tf.argMax(model.forward(b.inputs), -1).arraySync() as number[][]); // [B, T]
    b.dispose();
    group.forEach((seq, row) => {
      // target token i is predicted at input position i - 1; only trained (assistant) tokens are calls
      const pieces = seq.ids.map((id, i) => (seq.lossMask[i] ? tokenizer.piece(id) : ''));
      for (const span of argumentValueSpans(pieces)) {
        let ok = true;
        for (const i of span) {
          if (i - 1 >= pred[row].length) { ok = false; continue; }
          const hit = pred[row][i - 1] === seq.ids[i];
          tokens++;
          if (hit) right++; else ok = false;
        }
        calls++;
        if (ok) callsRight++;
      }
    });
  }
  return { tokens, tokenAccuracy: tokens ? right / tokens : 0, calls, callAccuracy: calls ? callsRight / calls : 0 };
}

/** Per-turn pass rates: turns up to the first failing one were reached; the failing one did not pass. */
function turnPassByCalls(tasks: Map<string, Task>, trajs: Trajectory[]): Record<string, { n: number; pass: number }> {
  const acc: Record<string, { n: number; passed: number }> = {};
  for (const t of trajs) {
    const task = tasks.get(t.taskId)!;
    const last = t.errorTurn === null ? task.turns.length - 1 : Math.min(t.errorTurn, task.turns.length - 1);
    for (let i = 0; i <= last; i++) {
      const k = task.turns[i].gt.length;
      const key = k >= 4 ? '4+' : String(k);
      acc[key] = acc[key] ?? { n: 0, passed: 0 };
      acc[key].n++;
      if (t.errorTurn === null || i < t.errorTurn) acc[key].passed++;
    }
  }
  const out: Record<string, { n: number; pass: number }> = {};
  for (const k of Object.keys(acc).sort()) out[k] = { n: acc[k].n, pass: acc[k].passed / acc[k].n };
  return out;
}

export interface CalibrationInput {
  train: Task[];
  id: Task[];
  formatOod: Task[];
  contentOod: Task[];
}

/** Run every measurement; `onProgress` gets a phase name and a fraction. */
export function calibrate(model: GPT, tokenizer: Tokenizer, data: CalibrationInput,
  config: Partial<CalibrationConfig> = {},
  onProgress?: (phase: string, done: number, total: number) => void,
    targets: CalibrationTargets = REGIME_TABLE.strong.targets,
  promptsPerStep = PRESET_TABLE.full.promptsPerStep): CalibrationReport {
  const cfg: CalibrationConfig = { ...defaultCalibrationConfig, ...config };
  if (!(cfg.temperature > 0)) throw new Error(`calibrate: temperature must be > 0, got ${cfg.temperature}`);
  const t0 = Date.now();
  const tasks = balancedTasks(data.train, cfg.tasks);
  const rng = new Rng(cfg.seed);

  // ---- sampled groups ----
  const trajs: Trajectory[] = [];
  for (let i = 0; i < tasks.length; i += cfg.batchTasks) {
    const chunk = tasks.slice(i, i + cfg.batchTasks);
    const episodes = chunk.flatMap((t) => Array.from({ length: cfg.groupSize }, () => new Episode(t)));
    trajs.push(...rollout(model, tokenizer, episodes, { rng,
      config: { temperature: cfg.temperature, greedy: false } }));
    onProgress?.('sample', Math.min(i + cfg.batchTasks, tasks.length), tasks.length);
  }
  const rewards = trajs.map((t) => t.reward);
  const shares = groupShares(rewards, cfg.groupSize);
  const noSignalStep: Record<string, number> = {};
  for (const P of Array.from(new Set([4, 16, promptsPerStep, 60])).sort((a, b) => a - b)) noSignalStep[String(P)] =
    Math.pow(1 - shares.mixed, P);

  // ---- teacher-forced argument values, probe ----
  onProgress?.('argument values', 0, 1);
  const argumentValues = argumentValueAccuracy(model, tokenizer, tasks);
  const probe = runProbe(model, tokenizer, probeContexts(tokenizer,
    tasks.map((t) => new Episode(t).initialMessages())), 5);

  // ---- greedy evaluations ----
  const limit = (ts: Task[]) => (cfg.evalPerCategory > 0 ? balancedTasks(ts,
    cfg.evalPerCategory * new Set(ts.map((t) => t.category)).size) : ts);
  const evalSplit = (name: string, ts: Task[], syntax: 'json' | 'python') =>
    evaluateModel(model, tokenizer, limit(ts), { syntax, onProgress: (d, n) => onProgress?.(name, d, n) });
  const id = evaluateModel(model, tokenizer, limit(data.id),
    { onProgress: (d, n) => onProgress?.('greedy id', d, n), keepTrajectories: true });
  const formatOod = evalSplit('greedy format-ood', data.formatOod, 'python');
  const contentOod = evalSplit('greedy content-ood', data.contentOod, 'json');

  const success = rewards.reduce((a, b) => a + b, 0) / Math.max(rewards.length, 1);
  const messages = id.trajectories!.flatMap((t) => t.messages);
  const attempts = messages.filter((m) => attemptsCall(m.content));
  const toolSyntax = attempts.length ? attempts.filter((m) => m.state === 'healthyCall').length / attempts.length : 0;
  const measured: Record<keyof CalibrationTargets, number> = {
    sampledSuccess: success, mixedGroups: shares.mixed, noSignalStep: Math.pow(1 - shares.mixed, promptsPerStep),
    greedyId: id.mean, toolSyntax, formatOod: formatOod.mean, contentOod: contentOod.mean,
  };
  return {
    config: cfg,
    sampled: {
      tasks: tasks.length, trajectories: trajs.length, success,
      mixedGroups: shares.mixed, allFailGroups: shares.allFail, allSuccessGroups: shares.allSuccess, noSignalStep,
      perCategory: meanRewardPerCategory(trajs), turnPassByCalls: turnPassByCalls(new Map(tasks.map((t) => [t.id, t])),
        trajs),
      entropy: sampledNll(trajs),
    },
    argumentValues,
    probe,
    greedy: {
      id: id.mean, formatOod: formatOod.mean, contentOod: contentOod.mean,
      idPerCategory: Object.fromEntries(Object.entries(id.perCategory).map(([c, v]) => [c, v.accuracy])), toolSyntax,
      toolMessages: messages.length ? attempts.length / messages.length : 0,
      emptyMessages: messages.length ? messages.filter((m) => m.content.trim() === '').length / messages.length : 0,
    },
    targets: checkTargets(measured, targets, promptsPerStep),
    seconds: (Date.now() - t0) / 1000,
  };
}

/** Mean sampled reward per task category. */
function meanRewardPerCategory(trajs: Trajectory[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of new Set(trajs.map((t) => t.category))) {
    const rs = trajs.filter((t) => t.category === c).map((t) => t.reward);
    out[c] = rs.reduce((a, b) => a + b, 0) / rs.length;
  }
  return out;
}

/** Mean negative log-prob of the sampled (not scripted) assistant tokens: the policy's sampling entropy, estimated. */
function sampledNll(trajs: Trajectory[]): number {
  let nll = 0, tokens = 0;
  for (const t of trajs) {
    t.lossMask.forEach((m, i) => {
      if (m === 1 && t.offPolicy[i] === 0) { nll -= t.sampleLogProbs[i]; tokens++; }
    });
  }
  return tokens ? nll / tokens : 0;
}

/** Each pre-registered target against its measured value (a range, a floor, or for noSignalStep a ceiling). */
function checkTargets(measured: Record<keyof CalibrationTargets, number>, targets: CalibrationTargets,
  promptsPerStep: number):
  CalibrationReport['targets'] {
  const checked: CalibrationReport['targets'] = {};
  for (const [k, t] of Object.entries(targets) as [keyof CalibrationTargets, number | [number, number]][]) {
    const v = measured[k];
    if (Array.isArray(t)) checked[k] = { value: v, target: t[1] >= 1 ? `>= ${t[0]}` : `${t[0]}-${t[1]}`,
      met: v >= t[0] && v <= t[1] };
    else if (k === 'noSignalStep') checked[`${k}@${promptsPerStep}`] = { value: v, target: `<= ${t}`, met: v <= t };
    else checked[k] = { value: v, target: `>= ${t}`, met: v >= t };
  }
  return checked;
}

/** A plain-text table of the report, for the terminal and the README. */
export function formatCalibration(r: CalibrationReport): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const s = r.sampled;
  const lines = [
    `sampled (T=${r.config.temperature}, ${s.tasks} training tasks x ${r.config.groupSize}): success ` +
      `${pct(s.success)}; ` +
      `groups mixed ${pct(s.mixedGroups)}, all-fail ${pct(s.allFailGroups)}, all-success ${pct(s.allSuccessGroups)}`,
    `  per category: ${Object.entries(s.perCategory).map(([c, v]) => `${c} ${pct(v)}`).join(', ')}`,
    `  P(no signal in a step of P prompts): ` +
      `${Object.entries(s.noSignalStep).map(([p, v]) => `P=${p} ${v.toFixed(3)}`).join(', ')}`,
    `  turn pass rate by ground-truth calls: ` +
      `${Object.entries(s.turnPassByCalls).map(([k, v]) => `${k} calls ${pct(v.pass)} (n=${v.n})`).join(', ')}`,
    `  mean entropy of sampled tokens: ${s.entropy.toFixed(3)} nats`,
    `argument values (teacher-forced argmax): tokens ${pct(r.argumentValues.tokenAccuracy)} ` +
      `(n=${r.argumentValues.tokens}), ` +
      `whole calls ${pct(r.argumentValues.callAccuracy)} (n=${r.argumentValues.calls})`,
    `probe after <tool_call>\\n: ${r.probe.top.map((t) => `${JSON.stringify(t.token)} ${t.p.toFixed(4)}`).join(', ')}`,
    `greedy: ID ${pct(r.greedy.id)} ` +
      `(${Object.entries(r.greedy.idPerCategory).map(([c, v]) => `${c} ${pct(v)}`).join(', ')}), ` +
      `format-OOD ${pct(r.greedy.formatOod)}, content-OOD ${pct(r.greedy.contentOod)}; ` +
      `healthy call syntax in ${pct(r.greedy.toolSyntax)} of the ID messages that call a tool ` +
        `(${pct(r.greedy.toolMessages)} of all; ` +
      `${pct(r.greedy.emptyMessages)} empty)`,
    'targets: ' +
      Object.entries(r.targets).map(([k, t]) =>
      `${k} ${t.value.toFixed(3)} (${t.target}) ${t.met ? 'met' : 'NOT met'}`).join('; '),
  ];
  return lines.join('\n');
}
