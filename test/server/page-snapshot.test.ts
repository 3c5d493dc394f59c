/**
 * The snapshot view in headless Chromium: a snapshot file chosen on the page is uploaded, analysed with a
 * what-if setting typed by the user, and its numbers shown as gpumem snapshot computes them.
 */
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatBytes } from '../../src/core/index.js';
import { simulateSnapshot } from '../../src/core/allocator/index.js';
import { buildReport } from '../../src/core/snapshot/index.js';
import { readSnapshotFile } from '../../src/sources/index.js';
import { CHROMIUM } from '../setup/chromium.js';
import { startHarness, type Harness } from './harness.js';

const REAL = '/work/shared/fixtures/snapshots-real/constructor_memory_snapshot.pickle';
const WHAT_IF = 'expandable_segments:False';
const missing = inject('chromiumMissing');
const skip = missing === '' ? '' : ` — SKIPPED: ${missing}`;
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  if (missing !== '') return;
  h = await startHarness({ intervalMs: 500 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('the snapshot view in Chromium', () => {
  it.skipIf(missing !== '')(`uploads a snapshot and shows its analysis and the typed what-if's simulation${skip}`, async () => {
    const snapshot = readSnapshotFile(REAL);
    const device = buildReport(snapshot, { top: 10, requestBytes: null }).devices[0]!;
    const sim = simulateSnapshot(snapshot, [WHAT_IF], null).find((s) => s.device === device.device)!;
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${h.base}/#snapshot`);
    await page.locator('#snapshot-file').setInputFiles(REAL);
    await page.locator('#snapshot-whatif').fill(WHAT_IF);
    await page.locator('#snapshot-form button').click();
    const result = page.locator('#snapshot-result');
    await expect.poll(() => result.locator('h3').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await result.locator('h3').first().textContent()).toBe(`GPU ${device.device}`);
    const facts = await result.locator('table').first().innerText();
    expect(facts).toContain(`reserved\t${formatBytes(device.summary.reservedBytes)}`);
    expect(facts).toContain(`allocated\t${formatBytes(device.summary.allocatedBytes)}`);
    const whatIfRow = result.locator('tr', { hasText: WHAT_IF }).first();
    const w = sim.whatIf[0]!;
    expect((await whatIfRow.innerText()).split('\t').slice(0, 4)).toEqual([WHAT_IF, formatBytes(w.peakReservedBytes), formatBytes(w.endReservedBytes), String(w.endSegmentCount)]);
    expect(await page.locator('#snapshot-status').textContent()).toBe('upload');
    expect(problems).toEqual([]);
    await page.close();
  });
});
