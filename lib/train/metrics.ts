/**
 * Per-step metrics: kept in memory (for notebooks and summaries) and appended to `metrics.jsonl`
 * (one JSON object per line, flushed at every step so a killed run keeps what it logged).
 */
import * as fs from 'fs';
import * as path from 'path';
import { readJsonlValues } from '../util/jsonl';
import type { MetricRecord } from './records';


/** Anything that accepts records of one kind (a MetricsLog, or a wrapper that adds the run-level fields). */
export interface MetricsSink<R = MetricRecord> {
  log(rec: R): void;
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
}

/** Read a metrics.jsonl file back (blank lines ignored, a torn final line absent, a broken line named). */
export function readMetrics(file: string): MetricRecord[] {
  return readJsonlValues<MetricRecord>(file, `metrics file not found: ${file}`);
}
