/** The companion's PyTorch split over time in the run history (schema version 4), and migrating a version 3 file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { SplitPoint } from '../../../src/core/companion/report.js';
import { HISTORY_SCHEMA_VERSION, beginRun, completeRun, getRun, openHistory, type HistoryReport } from '../../../src/store/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const GiB = 1024 ** 3;
const splitTimeline: SplitPoint[] = [
  { tMs: 0, allocatedBytes: { 'GPU-a': 1 * GiB }, reservedBytes: { 'GPU-a': 2 * GiB } },
  { tMs: 100, allocatedBytes: { 'GPU-a': 3 * GiB, 'GPU-b': 5 }, reservedBytes: { 'GPU-a': 4 * GiB } },
];
const report: HistoryReport = {
  argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1000, durationMs: 5000, gpus: [{ index: 0, uuid: 'GPU-a' }], env: [],
  attempts: [{
    attempt: 1, argv: ['python', 'train.py'], batch: null, durationMs: 5000, exit: { code: 0, signal: null },
    peaks: [], ooms: [], cleanup: { leftovers: [] }, timeline: [], plugins: { companion: { gpus: [], splitTimeline } },
  }],
  retries: 0, exit: { code: 0, signal: null },
};

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-db-'));
  dirs.push(dir);
  return join(dir, 'h.db');
}

describe('history: the PyTorch split over time', () => {
  it('stores every point per GPU exactly, a missing number as null, and none for a run without the companion', () => {
    const db = openHistory(tempDb());
    const id = beginRun(db, { argv: report.argv, cwd: '/w', startedAtMs: 1000 });
    completeRun(db, id, report);
    const other = beginRun(db, { argv: ['true'], cwd: '/w', startedAtMs: 2000 });
    completeRun(db, other, { ...report, attempts: [{ ...report.attempts[0]!, plugins: {} }] });
    expect(db.prepare('SELECT * FROM pytorch_samples ORDER BY t_ms, gpu_uuid').all()).toEqual([
      { run_id: id, attempt: 1, t_ms: 0, gpu_uuid: 'GPU-a', allocated_bytes: 1 * GiB, reserved_bytes: 2 * GiB },
      { run_id: id, attempt: 1, t_ms: 100, gpu_uuid: 'GPU-a', allocated_bytes: 3 * GiB, reserved_bytes: 4 * GiB },
      { run_id: id, attempt: 1, t_ms: 100, gpu_uuid: 'GPU-b', allocated_bytes: 5, reserved_bytes: null },
    ]);
    // The report read back carries the same series (what the server's run samples API serves).
    const back = getRun(db, id)!.report as { attempts: Array<{ plugins: { companion: { splitTimeline: unknown } } }> };
    expect(back.attempts[0]!.plugins.companion.splitTimeline).toEqual(splitTimeline);
    db.close();
  });

  it('migrates a version 3 database, keeping its runs and their reports readable', () => {
    const path = tempDb();
    openHistory(path).close();
    const raw = new Database(path);
    raw.exec('DROP TABLE pytorch_samples');
    raw.pragma('user_version = 3');
    const oldReport = { ...report, attempts: [{ ...report.attempts[0]!, plugins: { companion: { gpus: [] } } }] };
    raw.prepare("INSERT INTO runs (argv_json, cwd, started_at_ms, status, report_json) VALUES ('[\"python\"]', '/', 1, 'ok', ?)").run(JSON.stringify(oldReport));
    raw.close();
    const db = openHistory(path);
    expect(db.pragma('user_version', { simple: true })).toBe(HISTORY_SCHEMA_VERSION);
    expect(HISTORY_SCHEMA_VERSION).toBe(4);
    expect(db.prepare('SELECT COUNT(*) AS n FROM pytorch_samples').get()).toEqual({ n: 0 });
    const run = getRun(db, 1)!;
    expect(run.run.argv).toEqual(['python']);
    expect(run.run.unreadable).toBeUndefined();
    db.close();
  });
});
