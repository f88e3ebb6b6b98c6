/**
 * Per-step metrics: kept in memory (for notebooks and summaries) and appended to `metrics.jsonl`
 * (one JSON object per line, flushed at every step so a killed run keeps what it logged).
 */
import * as fs from 'fs';
import * as path from 'path';
import { readJsonlValues } from '../util/jsonl';

export type MetricRecord = Record<string, number | string | boolean | null | Record<string, number>>;

/** Anything that accepts metric records (a MetricsLog, or a wrapper that adds fields). */
export interface MetricsSink {
  log(rec: MetricRecord): void;
}

export class MetricsLog implements MetricsSink {
  readonly records: MetricRecord[] = [];

  private readonly beforeLog?: () => void;

  /**
   * `file`: where to append (created with its folder); null keeps the log in memory only. `beforeLog` runs
   * before every record: throwing there stops the run before the step is logged (e.g. when the process
   * that started the run has died).
   */
  constructor(readonly file: string | null = null, opts: { truncate?: boolean; beforeLog?: () => void } = {}) {
    this.beforeLog = opts.beforeLog;
    if (file) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      if (opts.truncate ?? true) fs.writeFileSync(file, '');
    }
  }

  log(rec: MetricRecord): void {
    this.beforeLog?.();
    this.records.push(rec);
    if (this.file) fs.appendFileSync(this.file, JSON.stringify(rec) + '\n');
  }

  /** The last record holding `key`, or undefined. */
  last(key: string): MetricRecord | undefined {
    for (let i = this.records.length - 1; i >= 0; i--) if (key in this.records[i]) return this.records[i];
    return undefined;
  }
}

/** Read a metrics.jsonl file back (blank lines ignored, a torn final line absent, a broken line named). */
export function readMetrics(file: string): MetricRecord[] {
  return readJsonlValues<MetricRecord>(file, `metrics file not found: ${file}`);
}
