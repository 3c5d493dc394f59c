/**
 * The page as a person sees it, in headless Chromium (Debian's package) under the server's
 * Content-Security-Policy: live numbers from the fake driver appear and update, a hostile command line
 * shows as text, charts draw, a run's timeline, OOM and step timing show, and no request leaves the origin.
 */
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CHROMIUM } from '../setup/chromium.js';
import { writeScenario } from '../fake-nvml/scenario.js';
import { HOSTILE, startHarness, type Harness } from './harness.js';
import { EVAL_PID, OOM_TEXT, TRAIN_PID } from './history-fixture.js';

const missing = inject('chromiumMissing');
const skip = missing === '' ? '' : ` — SKIPPED: ${missing}`;
const SHOT = new URL('../../build/serve-page.png', import.meta.url).pathname;
let h: Harness;
let browser: Browser;

beforeAll(async () => {
  if (missing !== '') return;
  h = await startHarness({ intervalMs: 200, dbPath: 'fixture' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('the page in Chromium', () => {
  it.skipIf(missing !== '')(`shows live GPUs and processes, updates them, and shows a hostile command line as text${skip}`, async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${h.base}/#token=${h.token}`);
    const gpu0 = page.locator('.gpu[data-index="0"] .mem');
    await expect.poll(() => gpu0.textContent(), { timeout: 10_000 }).toContain('19.53 GiB / 79.65 GiB · util 87% · 58°C · 412 W');

    writeScenario(h.scenarioPath, h.scenario(30_000, 12));
    await expect.poll(() => gpu0.textContent(), { timeout: 10_000 }).toContain('29.30 GiB / 79.65 GiB · util 12%');

    const hostile = page.locator(`#processes tr[data-pid="${h.hostilePid}"] td.cmd`);
    expect(await hostile.textContent()).toBe(`/bin/sh -c sleep 60 ${HOSTILE}`);
    expect(await page.locator('#processes img, #processes script').count()).toBe(0);
    expect(await page.title()).toBe('gpumem');

    await expect.poll(() => page.locator('#chart-memory canvas').count(), { timeout: 5000 }).toBeGreaterThan(0);
    expect(await page.locator('#chart-util .u-legend').textContent()).toContain('GPU 1');
    // Action buttons appear with the token, for processes visible here.
    expect(await page.locator(`#processes tr[data-pid="${h.trainerPid}"] button`).count()).toBe(1);
    await page.screenshot({ path: SHOT });
    const origin = new URL(h.base).origin;
    expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it.skipIf(missing !== '')(`lists runs from the history and shows a run's memory timeline and OOM${skip}`, async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const problems: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${h.base}/#runs`);
    const rows = page.locator('#runs tbody tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(2);
    expect(await rows.nth(1).textContent()).toContain('python train.py --bs 64');
    expect(await rows.nth(1).textContent()).toContain('10.00 GiB');
    await rows.nth(1).click();
    await expect.poll(() => page.locator('#chart-run canvas').count(), { timeout: 5000 }).toBeGreaterThan(0);
    expect(await page.locator('#run-ooms li').textContent()).toBe(`attempt 1, line 42: ${OOM_TEXT}`);
    expect(await page.locator('#run-ooms b').count()).toBe(0);
    await expect.poll(() => page.locator('#run-split li').first().textContent(), { timeout: 5000 }).toBe('no PyTorch numbers: the run was not supervised with the companion');
    await expect.poll(() => page.locator('#run-steps li').allTextContents(), { timeout: 5000 }).toEqual([
      `attempt 1, pid ${EVAL_PID}: 3 steps of 12.5 ms, 5120.0 samples/s, 81920 tokens/s, batch 64`,
      `attempt 1, pid ${TRAIN_PID}: 200 steps of 45.0 ms, 40% waiting for data, 1422.2 samples/s, batch 64 (asked 64)`,
    ]);
    // Opening the other run fills the comparison with both; the finished run's peak and the running one's dash.
    await rows.nth(0).click();
    await expect.poll(() => page.locator('#cmp-b').inputValue(), { timeout: 5000 }).not.toBe('');
    await page.locator('#compare-form button').click();
    const peakRow = page.locator('#compare tr', { hasText: 'attempt 1: peak per GPU' });
    await expect.poll(() => peakRow.count(), { timeout: 5000 }).toBe(1);
    expect((await peakRow.innerText()).split('\t')).toEqual(['attempt 1: peak per GPU', '–', 'GPU 0 10.00 GiB']);
    const cells = async (label: string): Promise<string[]> => (await page.locator('#compare tr', { hasText: label }).innerText()).split('\t');
    expect(await cells('step time (training loop')).toEqual(['step time (training loop, last attempt)', '–', '45.0 ms']);
    expect(await cells('data-wait share')).toEqual(['data-wait share of step time', '–', '40%']);
    expect(await cells('samples/s')).toEqual(['samples/s', '–', '1422.2']);
    expect(problems).toEqual([]);
    await page.close();
  });
});
