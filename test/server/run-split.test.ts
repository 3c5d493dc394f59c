/**
 * A supervised run's PyTorch split over time: the run samples API serves it per attempt, the page's split
 * endpoint says the run has it, and the page draws allocated and reserved beside the memory timeline; a run
 * recorded without it keeps working and says what it has.
 */
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SplitPoint } from '../../src/core/companion/report.js';
import { beginRun, completeRun, openHistory, type HistoryReport } from '../../src/store/index.js';
import { CHROMIUM } from '../setup/chromium.js';
import { startHarness, type Harness } from './harness.js';
import { RUN_UUID } from './history-fixture.js';

const missing = inject('chromiumMissing');
const skip = missing === '' ? '' : ` — SKIPPED: ${missing}`;
const GiB = 1024 ** 3;
let h: Harness;
let runId: number;
let browser: Browser | undefined;

const splitTimeline: SplitPoint[] = Array.from({ length: 10 }, (_, k) => ({
  tMs: k * 200, allocatedBytes: { [RUN_UUID]: (k + 1) * GiB }, reservedBytes: { [RUN_UUID]: (k + 2) * GiB },
}));

beforeAll(async () => {
  h = await startHarness({ dbPath: 'fixture' });
  const db = openHistory(join(h.runtimeDir, 'history.db'));
  const argv = ['python', 'finetune.py'];
  runId = beginRun(db, { argv, cwd: '/w', startedAtMs: 1_790_000_200_000 });
  const gpu = {
    gpuUuid: RUN_UUID, gpuIndex: 0, pids: [7], atMs: 1800, treeBytes: 12 * GiB, processUsedBytes: 12 * GiB, allocatedBytes: 10 * GiB,
    reservedBytes: 11 * GiB, unallocatedBytes: GiB, nonPytorchBytes: GiB, otherProcessesBytes: 0,
    peakAllocatedBytes: 10 * GiB, peakReservedBytes: 11 * GiB, numAllocRetries: 0, numOoms: 0,
  };
  const report: HistoryReport = {
    argv, cwd: '/w', startedAtMs: 1_790_000_200_000, durationMs: 2000, gpus: [{ index: 0, uuid: RUN_UUID }], env: [], retries: 0,
    exit: { code: 0, signal: null },
    attempts: [{
      attempt: 1, argv, batch: null, durationMs: 2000, exit: { code: 0, signal: null }, ooms: [], cleanup: { leftovers: [] },
      peaks: [{ index: 0, uuid: RUN_UUID, peakBytes: 12 * GiB, atMs: 1800, chosen: true }],
      timeline: Array.from({ length: 10 }, (_, k) => ({ tMs: k * 200, bytes: { [RUN_UUID]: (k + 3) * GiB } })),
      plugins: { companion: { gpus: [gpu], splitTimeline } },
    }],
  };
  completeRun(db, runId, report);
  db.close();
  if (missing === '') browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => (await fetch(`${h.base}${path}`)).json();

describe('the PyTorch split over time of a run', () => {
  it('is in the run samples API, and the split view says the run has it; an older run has none', async () => {
    const samples = await get(`/api/v1/runs/${runId}/samples`);
    expect(samples.attempts[0].pytorchTimeline).toEqual(splitTimeline);
    expect((await get(`/api/v1/page/runs/${runId}/split`)).perSample).toBe(true);
    const older = (await get('/api/v1/runs')).runs.find((r: { argv: string[] }) => r.argv.includes('train.py')).id;
    expect((await get(`/api/v1/runs/${older}/samples`)).attempts[0].pytorchTimeline).toEqual([]);
    expect((await get(`/api/v1/page/runs/${older}/split`)).perSample).toBe(false);
  });

  it.skipIf(missing !== '')(`is drawn on the run's timeline in the page${skip}`, async () => {
    const page = await browser!.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    await page.goto(`${h.base}/#runs`);
    const row = page.locator('#runs tbody tr', { hasText: 'finetune.py' });
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    await row.click();
    const legend = page.locator('#chart-run .u-legend');
    await expect.poll(() => legend.textContent(), { timeout: 5000 }).toContain(`PyTorch allocated ${RUN_UUID}`);
    expect(await legend.textContent()).toContain(`PyTorch reserved ${RUN_UUID}`);
    await expect.poll(() => page.locator('#run-split li').last().textContent(), { timeout: 5000 })
      .toBe('PyTorch reserved (dashed) and allocated (dotted) per GPU are drawn on the timeline above');
    // Hovering the chart's right end shows the last point's numbers: 12 GiB on the GPU, 11 reserved, 10 allocated.
    const over = page.locator('#chart-run .u-over');
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width - 1, box.y + box.height / 2);
    const values = await page.locator('#chart-run .u-legend .u-series .u-value').allTextContents();
    expect(values.slice(1)).toEqual(['12', '11', '10']);
    expect(problems).toEqual([]);
    await page.close();
  });
});
