/** Comparing two runs, a run's step timing and its PyTorch split over the page's API, from a history written here. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GiB, MiB } from '../../src/core/units.js';
import { beginRun, completeRun, openHistory, type HistoryReport } from '../../src/store/index.js';
import { startHarness, type Harness } from './harness.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (h: Harness, path: string): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${h.base}${path}`);
  return { status: res.status, body: JSON.parse(await res.text()) };
};
let h: Harness;
let dir: string;
let plain: number;
let withTorch: number;

function report(durationMs: number, peakBytes: number, extra: Record<string, unknown>): HistoryReport {
  const attempt = { attempt: 1, argv: ['python', 'train.py'], batch: null, durationMs, exit: { code: 0, signal: null },
    peaks: [{ index: 0, uuid: 'GPU-a', peakBytes, atMs: 100, chosen: true }], ooms: [], timeline: [], ...extra };
  return { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1_790_000_000_000, durationMs, gpus: [{ index: 0, uuid: 'GPU-a' }], env: [], retries: 0, exit: { code: 0, signal: null }, attempts: [attempt] } as unknown as HistoryReport;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpumem-serve-cmp-'));
  const dbPath = join(dir, 'history.db');
  const db = openHistory(dbPath);
  plain = beginRun(db, { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1_790_000_000_000 });
  completeRun(db, plain, report(60_000, 10 * GiB, { cleanup: { leftovers: [{ pid: 7, comm: 'python', cmdline: ['python', 'worker.py'], gpuBytes: 512 * MiB, outcome: 'terminated', detail: 'SIGTERM' }], memoryReleased: false, waitedMs: 5000, heldByNothing: [{ index: 0, uuid: 'GPU-a', bytes: 512 * MiB }], toleranceBytes: 0 } }));
  withTorch = beginRun(db, { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1_790_000_100_000 });
  completeRun(db, withTorch, report(90_000, 12 * GiB, {
    cleanup: { leftovers: [], memoryReleased: true, waitedMs: 10, heldByNothing: [], toleranceBytes: 0 },
    plugins: { companion: { gpus: [{ gpuUuid: 'GPU-a', gpuIndex: 0, pids: [9], atMs: 4500, treeBytes: 12 * GiB, processUsedBytes: 12 * GiB, allocatedBytes: 8 * GiB, reservedBytes: 11 * GiB, maxPeakAllocatedBytes: 9 * GiB, maxPeakReservedBytes: 11 * GiB }], unprintedOoms: [{}], snapshots: [],
      // An older companion's step summary (no tokens/s, no batch range), a process with no complete step, one without steps.
      processes: [{ pid: 9, steps: { steps: 40, meanStepMs: 100, meanDataWaitMs: 10, dataWaitShare: 0.1, samplesPerSec: 320, batchSeen: 32, batchAsked: null } },
        { pid: 10, steps: { steps: 0, meanStepMs: null, meanDataWaitMs: null, dataWaitShare: null, samplesPerSec: null, batchSeen: null, batchAsked: null } }, { pid: 11 }] } },
  }));
  db.close();
  h = await startHarness({ dbPath });
}, 60_000);

afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('comparing two runs', () => {
  it('puts durations, peaks, OOMs and cleanup verdicts side by side', async () => {
    const { status, body } = await get(h, `/api/v1/page/compare?a=${plain}&b=${withTorch}`);
    expect(status).toBe(200);
    const rows = new Map<string, [string, string]>(body.rows.map((r: [string, string, string]) => [r[0], [r[1], r[2]]]));
    expect(rows.get('duration')).toEqual(['1m00s', '1m30s']);
    expect(rows.get('attempt 1: peak per GPU')).toEqual(['GPU 0 10.00 GiB', 'GPU 0 12.00 GiB']);
    expect(rows.get('OOMs (printed + caught)')).toEqual(['0', '1']);
    expect(rows.get('attempt 1: cleanup')).toEqual(['1 leftover process, memory not released, 512.00 MiB held by nothing', 'no leftovers']);
    expect(rows.get('step time (training loop, last attempt)')).toEqual(['–', '100.0 ms']);
    expect(rows.get('data-wait share of step time')).toEqual(['–', '10%']);
    expect(rows.get('samples/s')).toEqual(['–', '320.0']);
    expect(rows.get('attempt 1: PyTorch peak allocated / reserved')).toEqual(['no PyTorch numbers (run without the companion)', 'GPU 0 9.00 GiB / 11.00 GiB']);
  });

  it('refuses a missing or malformed id with one clear error', async () => {
    expect((await get(h, `/api/v1/page/compare?a=${plain}&b=999`)).status).toBe(404);
    const bad = await get(h, `/api/v1/page/compare?a=x&b=${plain}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('BAD_QUERY');
  });
});

describe("a run's step timing", () => {
  it('lists the processes that took steps, a field an older companion did not send as null, never 0', async () => {
    const { body } = await get(h, `/api/v1/page/runs/${withTorch}/steps`);
    expect(body.steps).toEqual([{
      attempt: 1, pid: 9, steps: 40, meanStepMs: 100, dataWaitShare: 0.1, samplesPerSec: 320, tokensPerSec: null,
      text: '40 steps of 100.0 ms, 10% waiting for data, 320.0 samples/s, batch 32',
    }]);
    expect((await get(h, `/api/v1/page/runs/${plain}/steps`)).body.steps).toEqual([]);
    expect((await get(h, '/api/v1/page/runs/999/steps')).status).toBe(404);
  });
});

describe("a run's PyTorch split", () => {
  it('gives the split the history keeps (at the peak) and says it is not per sample', async () => {
    const { body } = await get(h, `/api/v1/page/runs/${withTorch}/split`);
    expect(body.perSample).toBe(false);
    expect(body.splits).toHaveLength(1);
    expect(body.splits[0]).toMatchObject({ attempt: 1, gpu: 'GPU 0', atS: 4.5, allocatedBytes: 8 * GiB, reservedBytes: 11 * GiB });
    expect(body.splits[0].text).toContain('PyTorch reserved 11.00 GiB, allocated 8.00 GiB');
    expect((await get(h, `/api/v1/page/runs/${plain}/split`)).body.splits).toEqual([]);
  });
});
