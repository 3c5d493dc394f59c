/** The companion's per-GPU PyTorch numbers in the run history (schema version 2), and migrating a version 1 file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { HISTORY_SCHEMA_VERSION, beginRun, completeRun, openHistory, runFolderPath, type HistoryReport } from '../../../src/store/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const gpu = {
  gpuUuid: 'GPU-b', gpuIndex: 1, pids: [9], atMs: 40, treeBytes: 3_221_225_472, processUsedBytes: 3_221_225_472, allocatedBytes: 2_147_483_648,
  reservedBytes: 2_684_354_560, unallocatedBytes: 536_870_912, nonPytorchBytes: 536_870_912, otherProcessesBytes: 0,
  peakAllocatedBytes: 2_500_000_000, peakReservedBytes: 2_684_354_560, numAllocRetries: 2, numOoms: 1,
};

const report: HistoryReport = {
  argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1000, durationMs: 5000, gpus: [{ index: 1, uuid: 'GPU-b' }], env: [],
  attempts: [{
    attempt: 1, argv: ['python', 'train.py'], batch: null, durationMs: 5000, exit: { code: 1, signal: null },
    peaks: [], ooms: [], cleanup: { leftovers: [] }, timeline: [], plugins: { companion: { gpus: [gpu] } },
  }],
  retries: 0, exit: { code: 1, signal: null },
};

describe('history: PyTorch peaks', () => {
  it('stores the companion summary per GPU exactly; a run without the companion stores none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-db-'));
    dirs.push(dir);
    const db = openHistory(join(dir, 'h.db'));
    const id = beginRun(db, { argv: report.argv, cwd: '/w', startedAtMs: 1000 });
    completeRun(db, id, report);
    const other = beginRun(db, { argv: ['true'], cwd: '/w', startedAtMs: 2000 });
    completeRun(db, other, { ...report, attempts: [{ ...report.attempts[0]!, plugins: {} }] });
    expect(db.prepare('SELECT * FROM pytorch_peaks').all()).toEqual([{
      run_id: id, attempt: 1, gpu_index: 1, gpu_uuid: 'GPU-b', tree_bytes: gpu.treeBytes, allocated_bytes: gpu.allocatedBytes,
      reserved_bytes: gpu.reservedBytes, non_pytorch_bytes: gpu.nonPytorchBytes, peak_allocated_bytes: gpu.peakAllocatedBytes,
      peak_reserved_bytes: gpu.peakReservedBytes, num_alloc_retries: 2, num_ooms: 1,
    }]);
    db.close();
  });

  it('migrates a version 1 database, keeping its runs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-db-'));
    dirs.push(dir);
    const path = join(dir, 'h.db');
    openHistory(path).close();
    const raw = new Database(path);
    raw.exec('DROP TABLE pytorch_peaks; DROP TABLE step_timing; DROP TABLE pytorch_samples');
    raw.pragma('user_version = 1');
    raw.prepare("INSERT INTO runs (argv_json, cwd, started_at_ms, status) VALUES ('[]', '/', 1, 'ok')").run();
    raw.close();
    const db = openHistory(path);
    expect(db.pragma('user_version', { simple: true })).toBe(HISTORY_SCHEMA_VERSION);
    expect(HISTORY_SCHEMA_VERSION).toBe(4);
    expect(db.prepare('SELECT COUNT(*) AS n FROM runs').get()).toEqual({ n: 1 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM pytorch_peaks').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM step_timing').get()).toEqual({ n: 0 });
    db.close();
  });

  it('puts the run folder next to the database', () => {
    expect(runFolderPath('/d/gpumem/history.db', { runId: 12, startedAtMs: 0, pid: 5 })).toBe('/d/gpumem/runs/12');
    expect(runFolderPath('/d/h.db', { runId: null, startedAtMs: 0, pid: 5 })).toBe('/d/runs/1970-01-01T00-00-00-000Z-5');
  });
});
