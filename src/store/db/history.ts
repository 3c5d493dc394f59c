/**
 * Reading and writing run history. A run is inserted as "running" before the child starts and completed
 * in one transaction at the end, so a gpumem killed mid-run leaves a row that says so instead of nothing.
 * The report's types come from core/run; OOM events stay values until written here, in their JSON form.
 */
import type { CompanionReport } from '../../core/companion/report.js';
import { oomFindingJson } from '../../core/run/json.js';
import type { AttemptReport, GpuPeak, GpuRef, ProcessOutcome, RunReport } from '../../core/run/report.js';
import type { Db } from './open.js';

/** The parts of an attempt's report the history keeps (a supervise AttemptReport fits). */
export type HistoryAttempt = Pick<AttemptReport, 'attempt' | 'argv' | 'batch' | 'durationMs' | 'exit' | 'timeline' | 'ooms'> & {
  peaks: Array<Pick<GpuPeak, 'index' | 'uuid' | 'peakBytes' | 'atMs' | 'chosen'>>;
  cleanup: { leftovers: Array<Pick<ProcessOutcome, 'pid' | 'cmdline' | 'gpuBytes' | 'outcome' | 'detail'>> };
  /** Run plugins' data; the companion's per-GPU PyTorch summary is also stored as pytorch_peaks rows. */
  plugins?: { companion?: Pick<CompanionReport, 'gpus'> };
};

/** The parts of a run's report the history keeps (a supervise RunReport fits). */
export type HistoryReport = Pick<RunReport, 'argv' | 'cwd' | 'startedAtMs' | 'durationMs' | 'env' | 'retries' | 'exit'> & {
  gpus: Array<Pick<GpuRef, 'index' | 'uuid'>> | null;
  attempts: HistoryAttempt[];
  /** Set when the program could not be started (stored as status "not-started"). */
  startError?: string | null;
};

export interface RunRow {
  id: number;
  pipelineId: number | null;
  stage: string | null;
  argv: string[];
  cwd: string;
  gpus: Array<{ index: number; uuid: string }> | null;
  startedAtMs: number;
  durationMs: number | null;
  /**
   * "running" until completed; "ok", "failed", "signal" or "not-started" (the program could not be started)
   * after; a "running" row of a dead gpumem stays so.
   */
  status: string;
  exitCode: number | null;
  exitSignal: string | null;
  retries: number;
  /** Peak bytes of the tree, summed over GPUs, max over attempts. */
  peakBytes: number | null;
}

/** Inserts a run that is starting; returns its id. */
export function beginRun(db: Db, run: { argv: string[]; cwd: string; startedAtMs: number; pipelineId?: number; stage?: string }): number {
  const info = db
    .prepare('INSERT INTO runs (pipeline_id, stage, argv_json, cwd, started_at_ms, status) VALUES (?, ?, ?, ?, ?, ?)')
    .run(run.pipelineId ?? null, run.stage ?? null, JSON.stringify(run.argv), run.cwd, run.startedAtMs, 'running');
  return Number(info.lastInsertRowid);
}

function statusOf(report: HistoryReport): string {
  if (report.startError) return 'not-started';
  return report.exit.signal ? 'signal' : report.exit.code === 0 ? 'ok' : 'failed';
}

/** Stores the finished run's report and everything in it, in one transaction. */
export function completeRun(db: Db, id: number, report: HistoryReport): void {
  db.transaction(() => {
    db.prepare('UPDATE runs SET gpus_json = ?, duration_ms = ?, status = ?, exit_code = ?, exit_signal = ?, retries = ?, report_json = ? WHERE id = ?').run(
      report.gpus ? JSON.stringify(report.gpus) : null, report.durationMs, statusOf(report), report.exit.code, report.exit.signal,
      report.retries, JSON.stringify({ ...report, attempts: report.attempts.map((a) => ({ ...a, ooms: a.ooms.map(oomFindingJson) })) }), id,
    );
    const env = db.prepare('INSERT INTO env_decisions (run_id, name, value, previous, action, reason) VALUES (?, ?, ?, ?, ?, ?)');
    for (const d of report.env) env.run(id, d.name, d.value, d.previous, d.action, d.reason);
    const att = db.prepare('INSERT INTO attempts (run_id, attempt, argv_json, batch, accum, duration_ms, exit_code, exit_signal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const peak = db.prepare('INSERT INTO peaks (run_id, attempt, gpu_index, gpu_uuid, peak_bytes, at_ms, chosen) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const sample = db.prepare('INSERT INTO samples (run_id, attempt, t_ms, gpu_uuid, bytes) VALUES (?, ?, ?, ?, ?)');
    const oom = db.prepare('INSERT INTO oom_events (run_id, attempt, line, text, event_json) VALUES (?, ?, ?, ?, ?)');
    const left = db.prepare('INSERT INTO leftovers (run_id, attempt, pid, cmdline, gpu_bytes, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const torch = db.prepare('INSERT INTO pytorch_peaks (run_id, attempt, gpu_index, gpu_uuid, tree_bytes, allocated_bytes, reserved_bytes, non_pytorch_bytes, peak_allocated_bytes, peak_reserved_bytes, num_alloc_retries, num_ooms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    for (const a of report.attempts) {
      att.run(id, a.attempt, JSON.stringify(a.argv), a.batch?.batch ?? null, a.batch?.accum ?? null, a.durationMs, a.exit.code, a.exit.signal);
      for (const p of a.peaks) peak.run(id, a.attempt, p.index, p.uuid, p.peakBytes, p.atMs, p.chosen ? 1 : 0);
      for (const t of a.timeline) for (const [uuid, bytes] of Object.entries(t.bytes)) sample.run(id, a.attempt, t.tMs, uuid, bytes);
      for (const o of a.ooms.map(oomFindingJson)) oom.run(id, a.attempt, o.line, o.text, JSON.stringify({ event: o.event, causes: o.causes }));
      for (const l of a.cleanup.leftovers) left.run(id, a.attempt, l.pid, l.cmdline?.join(' ') ?? null, l.gpuBytes, l.outcome, l.detail);
      for (const g of a.plugins?.companion?.gpus ?? []) {
        torch.run(id, a.attempt, g.gpuIndex, g.gpuUuid, g.treeBytes, g.allocatedBytes, g.reservedBytes, g.nonPytorchBytes, g.peakAllocatedBytes, g.peakReservedBytes, g.numAllocRetries, g.numOoms);
      }
    }
  })();
}

interface RawRun {
  id: number; pipeline_id: number | null; stage: string | null; argv_json: string; cwd: string; gpus_json: string | null;
  started_at_ms: number; duration_ms: number | null; status: string; exit_code: number | null; exit_signal: string | null;
  retries: number; peak_bytes: number | null;
}

const SELECT_RUN = `SELECT r.*, (SELECT MAX(s) FROM (SELECT SUM(peak_bytes) AS s FROM peaks WHERE run_id = r.id GROUP BY attempt)) AS peak_bytes FROM runs r`;

function toRow(r: RawRun): RunRow {
  return {
    id: r.id, pipelineId: r.pipeline_id, stage: r.stage, argv: JSON.parse(r.argv_json) as string[], cwd: r.cwd,
    gpus: r.gpus_json ? (JSON.parse(r.gpus_json) as RunRow['gpus']) : null, startedAtMs: r.started_at_ms, durationMs: r.duration_ms,
    status: r.status, exitCode: r.exit_code, exitSignal: r.exit_signal, retries: r.retries, peakBytes: r.peak_bytes,
  };
}

/** The most recent runs, newest first. */
export function listRuns(db: Db, limit = 20): RunRow[] {
  return (db.prepare(`${SELECT_RUN} ORDER BY r.id DESC LIMIT ?`).all(limit) as RawRun[]).map(toRow);
}

/** One run with its full stored report (null while it is still running or was cut off). */
export function getRun(db: Db, id: number): { run: RunRow; report: unknown } | null {
  const raw = db.prepare(`${SELECT_RUN} WHERE r.id = ?`).get(id) as (RawRun & { report_json: string | null }) | undefined;
  if (!raw) return null;
  return { run: toRow(raw), report: raw.report_json ? (JSON.parse(raw.report_json) as unknown) : null };
}

/** Inserts a pipeline that is starting; returns its id. */
export function beginPipeline(db: Db, file: string, startedAtMs: number): number {
  return Number(db.prepare('INSERT INTO pipelines (file, started_at_ms, status) VALUES (?, ?, ?)').run(file, startedAtMs, 'running').lastInsertRowid);
}

/** Stores a finished pipeline's report. */
export function completePipeline(db: Db, id: number, status: string, durationMs: number, report: unknown): void {
  db.prepare('UPDATE pipelines SET status = ?, duration_ms = ?, report_json = ? WHERE id = ?').run(status, durationMs, JSON.stringify(report), id);
}

/** Schema version of the run-history documents (`gpumem runs --json`, the server's /api/v1/runs). */
export const RUNS_SCHEMA_VERSION = 1;

/** How many runs are in each state and how many OOM events the history holds (for /metrics). */
export function historySummary(db: Db): { byStatus: Record<string, number>; oomEvents: number } {
  const rows = db.prepare('SELECT status, COUNT(*) AS n FROM runs GROUP BY status').all() as Array<{ status: string; n: number }>;
  const ooms = db.prepare('SELECT COUNT(*) AS n FROM oom_events').get() as { n: number };
  return { byStatus: Object.fromEntries(rows.map((r) => [r.status, r.n])), oomEvents: ooms.n };
}
