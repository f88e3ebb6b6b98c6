/**
 * Per-step metrics: kept in memory (for notebooks and summaries) and appended to `metrics.jsonl`
 * (one JSON object per line, flushed at every step so a killed run keeps what it logged).
 */
import * as fs from 'fs';
import * as path from 'path';

export type MetricRecord = Record<string, number | string | boolean | null | Record<string, number>>;

/** Anything that accepts metric records (a MetricsLog, or a wrapper that adds fields). */
export interface MetricsSink {
  log(rec: MetricRecord): void;
}

export class MetricsLog implements MetricsSink {
  readonly records: MetricRecord[] = [];

  /** `file`: where to append (created with its folder); null keeps the log in memory only. */
  constructor(readonly file: string | null = null, opts: { truncate?: boolean } = {}) {
    if (file) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      if (opts.truncate ?? true) fs.writeFileSync(file, '');
    }
  }

  log(rec: MetricRecord): void {
    this.records.push(rec);
    if (this.file) fs.appendFileSync(this.file, JSON.stringify(rec) + '\n');
  }

  /** The last record holding `key`, or undefined. */
  last(key: string): MetricRecord | undefined {
    for (let i = this.records.length - 1; i >= 0; i--) if (key in this.records[i]) return this.records[i];
    return undefined;
  }
}

/** Read a metrics.jsonl file back (blank lines ignored; a broken line names its number). */
export function readMetrics(file: string): MetricRecord[] {
  if (!fs.existsSync(file)) throw new Error(`metrics file not found: ${file}`);
  const out: MetricRecord[] = [];
  fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line));
    } catch {
      throw new Error(`${file}:${i + 1}: not valid JSON`);
    }
  });
  return out;
}
