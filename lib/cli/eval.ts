/**
 * `toolrl eval`: greedy evaluation of a checkpoint, or of the scripted teacher (which must score 1.0: it
 * checks the world, the checker and the harness end to end). `--constrained` runs the capability probe:
 * the same checkpoint, decoding with only structurally impossible continuations forbidden; `--json-start` the
 * stricter variant that allows nothing but `{"` right after `<tool_call>\n`.
 */
import * as path from 'path';
import { loadTokenizer } from '../format/tokenizer';
import { STRUCTURAL_STATES, StructuralState } from '../format/types';
import { loadCheckpoint } from '../model/checkpoint';
import { loadTasks } from '../envs/data';
import { evaluatePolicy, teacherPolicy } from '../envs/evaluate';
import { Task } from '../envs/task';
import { evaluateModel } from '../train/evaluate';
import { jsonStartMask, structuralMask } from '../train/rollout';
import { perCategory, splitSyntax } from '../experiments/run/inputs';
import { ProgressBar } from '../util/progress';
import { activeBackend } from '../backend';

export type EvalSplit = 'id' | 'format_ood' | 'content_ood' | 'format_content_ood';

export interface EvalReport {
  split: EvalSplit;
  policy: string;
  backend: string | null;
  constrained: boolean;
  /** Decoding allowed only `{"` right after `<tool_call>\n` (the stricter probe). */
  jsonStart: boolean;
  perCategory: Record<string, { n: number; accuracy: number }>;
  mean: number;
  states: Record<StructuralState, number>;
  seconds: number;
  /** With `show`: the first episodes' task, verdict and assistant messages with their states. */
  shown?: { taskId: string; pass: boolean; messages: { content: string; state: StructuralState }[] }[];
}

export function splitTasks(split: EvalSplit, dataDir: string): Task[] {
  return loadTasks(split === 'id' ? 'test' : split, dataDir);
}

export async function runEval(opts: { checkpoint?: string; split: EvalSplit; limit: number; constrained: boolean;
  jsonStart?: boolean; dataDir: string; progress: boolean; show?: number }): Promise<EvalReport> {
  if (opts.jsonStart &&
    splitSyntax(opts.split) === 'python') throw new Error(`--json-start applies to JSON calls, not to ` +
    `${opts.split}'s python syntax`);
  const t0 = Date.now();
  const tasks = perCategory(splitTasks(opts.split, opts.dataDir), opts.limit);
  const syntax = splitSyntax(opts.split);
  const bar = new ProgressBar({ total: tasks.length, label: `eval ${opts.split}`, silent: !opts.progress });
  const onProgress = (done: number) => bar.update(done);
  let res;
  let shown: EvalReport['shown'];
  if (opts.checkpoint === undefined) {
    res = await evaluatePolicy(tasks, teacherPolicy(), { syntax, onProgress });
  } else {
    const tok = loadTokenizer(path.join(opts.dataDir, 'vocab.json'));
    const { model } = loadCheckpoint(opts.checkpoint, { expectVocabFingerprint: tok.fingerprint });
    try {
      const logitMask = opts.jsonStart ? jsonStartMask(tok) : opts.constrained ? structuralMask(tok) : undefined;
      res = evaluateModel(model, tok, tasks, { syntax, onProgress, logitMask, keepTrajectories: (opts.show ?? 0) > 0 });
      shown = res.trajectories?.slice(0, opts.show).map((t) => ({ taskId: t.taskId, pass: t.pass,
        messages: t.messages.map((m) => ({ content: m.content, state: m.state })) }));
    } finally {
      model.dispose();
    }
  }
  bar.finish(`mean ${res.mean.toFixed(3)}`);
  return {
    split: opts.split,
    policy: opts.checkpoint ?? 'teacher',
    backend: opts.checkpoint === undefined ? null : activeBackend(),
    constrained: opts.constrained,
    jsonStart: Boolean(opts.jsonStart),
    perCategory: res.perCategory,
    mean: res.mean,
    states: res.states,
    seconds: (Date.now() - t0) / 1000,
    ...(shown ? { shown } : {}),
  };
}

export function formatEval(r: EvalReport): string {
  const how = r.jsonStart ? ' (only {" after <tool_call>\\n)' : r.constrained ? ' (constrained decoding)' : '';
  const lines = [`${r.policy} on ${r.split}${how}`];
  for (const [c,
    v] of Object.entries(r.perCategory)) lines.push(`  ${c.padEnd(14)} ${v.accuracy.toFixed(3)}  (n=${v.n})`);
  lines.push(`  ${'mean'.padEnd(14)} ${r.mean.toFixed(3)}`);
  lines.push('  states: ' + STRUCTURAL_STATES.map((s) => `${s} ${(r.states[s] * 100).toFixed(1)}%`).join(', '));
  for (const e of r.shown ?? []) {
    lines.push(`${e.taskId} (${e.pass ? 'passed' : 'failed'}):`);
    for (const m of e.messages) lines.push(`  [${m.state}] ${JSON.stringify(m.content)}`);
  }
  return lines.join('\n');
}
