/**
 * The HTML report as a person sees it: opened in headless Chromium with every network request aborted. The
 * timeline must be drawn (an SVG path with points), no request may leave the page, and a screenshot is
 * written to build/snapshot-report.png for a human look. The test setup installs Chromium when it is missing
 * and it runs as root; when it cannot, this test is reported as skipped with the reason (and the suite
 * prints the reason in a banner), never as passed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { DIR } from '../core/snapshot/fixtures.js';
import { gpumemInProcess } from '../helpers/cli.js';
import { CHROMIUM } from '../setup/chromium.js';

const SHOT = new URL('../../build/snapshot-report.png', import.meta.url).pathname;

const missing = inject('chromiumMissing');

describe('snapshot HTML report in Chromium', () => {
  it.skipIf(missing !== '')(`draws the timeline with no network${missing ? ` — SKIPPED: ${missing}` : ''}`, async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'gpumem-html-')), 'report.html');
    const r = await gpumemInProcess(['snapshot', `${DIR}/current-p4.pickle`, '--html', out, '--request', '24MiB']);
    expect(r.code, r.stderr).toBe(0);
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
      const requests: string[] = [];
      page.on('request', (req) => requests.push(req.url()));
      await page.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
      await page.goto(pathToFileURL(out).href);
      const svgs = await page.locator('svg.timeline').count();
      expect(svgs).toBe(2);
      const pathPoints = await page.locator('svg.timeline path.allocated').first().getAttribute('d');
      expect((pathPoints ?? '').match(/L/g)?.length ?? 0).toBeGreaterThan(50);
      const box = await page.locator('svg.timeline').first().boundingBox();
      expect(box?.width).toBeGreaterThan(500);
      expect(await page.locator('text=OOM at event').count()).toBeGreaterThan(0);
      await page.screenshot({ path: SHOT, fullPage: false });
      expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
