/**
 * `gpumem estimate --html OUT` on a real traced step (real torch, fake tensors): the page carries the numbers
 * of the --json report (parsed back out of it), its timeline is replayed on its own and must agree with the
 * report's peaks, and a module named with markup shows as text — checked in the file and, in headless
 * Chromium, by what the page does (no script runs, no request leaves). When Chromium is missing that part is
 * reported as skipped with the reason, never as passed.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { CHROMIUM } from '../../setup/chromium.js';
import { requireTestPython } from '../../setup/python-venv.js';
import { estimate, TIMEOUT_MS, type Traced } from './traced-helpers.js';

const HOSTILE = "<img src=x onerror=\"document['title']='pwned'\"><script>document['title']='pwned'</script>&amp;";
const SHOT = new URL('../../../build/estimate-report.png', import.meta.url).pathname;
const missing = inject('chromiumMissing');

describe('gpumem estimate --html', () => {
  const out = join(mkdtempSync(join(tmpdir(), 'gpumem-estimate-html-')), 'step.html');
  let json: Traced;
  let html = '';

  it('writes a page whose numbers are the report\'s, with the timeline\'s own replay agreeing on the peaks', async () => {
    const r = await estimate(['--json', '--gpu', 'T4-16GB', '--html', out, '--', requireTestPython(), 'train_hostile.py']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    json = JSON.parse(r.stdout) as Traced;
    html = readFileSync(out, 'utf8');
    // The embedded report is the --json report.
    const embedded = /<script type="application\/json" id="gpumem-report">([^<]*)<\/script>/.exec(html)![1]!;
    expect(JSON.parse(embedded)).toEqual(json);
    // The category table holds the report's bytes.
    for (const [category, bytes] of Object.entries(json.byCategory)) {
      expect(html).toContain(`<tr data-category="${category}"><th>${category}</th><td class="num" data-bytes="${bytes}">`);
    }
    // The timeline is replayed apart from the report: its peaks must be the report's.
    const svg = /<svg class="timeline"[^>]*>/.exec(html)![0];
    const attr = (name: string): number => Number(new RegExp(`${name}="(\\d+)"`).exec(svg)![1]);
    expect(attr('data-peak-requested')).toBe(json.peakRequestedBytes);
    expect(attr('data-peak-allocated')).toBe(json.peakAllocatedBytes);
    expect(attr('data-peak-reserved')).toBe(json.peakReservedBytes);
    expect(attr('data-points')).toBeGreaterThan(50);
    expect(html).toMatch(/<rect [^>]*class="ph-forward"/);
    expect(html).toMatch(/<rect [^>]*class="ph-backward"/);
    expect(html).toMatch(/<rect [^>]*class="ph-optimizer"/);
    expect(html).toMatch(/<circle [^>]*class="peak"/);
    // The markup-named ReLU holds the largest activation at the peak; on the page it is escaped text only.
    expect(json.byModule.map((m) => m.module)).toContain(HOSTILE);
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('&lt;img src=x onerror=&quot;document[&#39;title&#39;]=&#39;pwned&#39;&quot;&gt;&lt;script&gt;');
    expect(html.match(/<script/g)).toHaveLength(1); // only the inert JSON block
    expect(html).not.toMatch(/<img/);
    expect(html).toContain('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">');
  }, TIMEOUT_MS);

  it.skipIf(missing !== '')(`in Chromium: the timeline is drawn, the hostile name is text, nothing runs, nothing is fetched${missing ? ` — SKIPPED: ${missing}` : ''}`, async () => {
    expect(html).not.toBe('');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1000, height: 1200 } });
      const requests: string[] = [];
      page.on('request', (req) => requests.push(req.url()));
      await page.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
      await page.goto(pathToFileURL(out).href);
      expect(await page.title()).toBe('gpumem estimate');
      expect(await page.locator('table.modules td.module').allTextContents()).toContain(HOSTILE);
      const box = await page.locator('svg.timeline').boundingBox();
      expect(box?.width).toBeGreaterThan(500);
      expect(await page.locator('svg.timeline rect').count()).toBeGreaterThanOrEqual(3);
      await page.screenshot({ path: SHOT, fullPage: false });
      expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('refuses --html without a traced step, and names an unwritable path (exit 2)', async () => {
    const config = await estimate(['--params', '1B', '--html', join(tmpdir(), 'x.html')]);
    expect(config.code).toBe(2);
    expect(config.stderr).toMatch(/error: --html draws the timeline of a traced step/);
    const r = await estimate(['--html', '/nonexistent-dir/step.html', '--steps', '1', '--', requireTestPython(), 'train_hostile.py']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: --html: cannot write \/nonexistent-dir\/step\.html \(ENOENT\)/);
  }, TIMEOUT_MS);
});
