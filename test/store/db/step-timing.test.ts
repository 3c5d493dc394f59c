/** The companion's step timing in the run history (schema version 3): stored per process, listed per run. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { StepSummary } from '../../../src/core/companion/index.js';
import { beginRun, completeRun, listRuns, openHistory, type HistoryReport } from '../../../src/store/index.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const steps = (n: number, meanStepMs: number, dataWaitShare: number, samplesPerSec: number): StepSummary => ({
  steps: n, meanStepMs, meanDataWaitMs: meanStepMs * dataWaitShare, dataWaitShare, samplesPerSec, batchSeen: 32, batchMin: 32, batchMax: 32, batchAsked: null,
});

function report(attempts: Array<Array<{ pid: number; steps: StepSummary | null }>>): HistoryReport {
  return {
    argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1000, durationMs: 5000, gpus: null, env: [], retries: attempts.length - 1, exit: { code: 0, signal: null },
    attempts: attempts.map((processes, i) => ({
      attempt: i + 1, argv: ['python', 'train.py'], batch: null, durationMs: 2000, exit: { code: 0, signal: null },
      peaks: [], ooms: [], cleanup: { leftovers: [] }, timeline: [], plugins: { companion: { gpus: [], processes } },
    })),
  };
}

describe('history: step timing', () => {
  it('lists the last attempt\'s busiest loop per run, and nulls for a run without step timing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-db-'));
    dirs.push(dir);
    const db = openHistory(join(dir, 'h.db'));
    const a = beginRun(db, { argv: ['python'], cwd: '/w', startedAtMs: 1000 });
    // Attempt 1 OOMed; in attempt 2 the training loop (pid 11, 400 steps) and an evaluation process (pid 12, 30 steps).
    completeRun(db, a, report([[{ pid: 10, steps: steps(50, 80, 0.5, 400) }], [{ pid: 11, steps: steps(400, 40.5, 0.625, 790.1) }, { pid: 12, steps: steps(30, 10, 0.1, 3200) }, { pid: 13, steps: null }]]));
    const b = beginRun(db, { argv: ['python'], cwd: '/w', startedAtMs: 2000 });
    completeRun(db, b, report([[{ pid: 20, steps: null }]]));
    const [rb, ra] = listRuns(db);
    expect([ra?.meanStepMs, ra?.dataWaitShare, ra?.samplesPerSec]).toEqual([40.5, 0.625, 790.1]);
    expect([rb?.meanStepMs, rb?.dataWaitShare, rb?.samplesPerSec]).toEqual([null, null, null]);
    expect(db.prepare('SELECT pid, attempt, steps FROM step_timing ORDER BY pid').all()).toEqual([
      { pid: 10, attempt: 1, steps: 50 }, { pid: 11, attempt: 2, steps: 400 }, { pid: 12, attempt: 2, steps: 30 },
    ]);
    db.close();
  });

  it('a damaged figure reads as unknown, not as a number', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-db-'));
    dirs.push(dir);
    const path = join(dir, 'h.db');
    const db = openHistory(path);
    completeRun(db, beginRun(db, { argv: ['python'], cwd: '/w', startedAtMs: 1000 }), report([[{ pid: 1, steps: steps(5, 10, 0.5, 100) }]]));
    db.close();
    const raw = new Database(path);
    raw.prepare("UPDATE step_timing SET mean_step_ms = 'x', data_wait_share = -1").run();
    raw.close();
    const again = openHistory(path);
    expect(listRuns(again).map((r) => [r.meanStepMs, r.dataWaitShare, r.samplesPerSec])).toEqual([[null, null, 100]]);
    again.close();
  });
});
