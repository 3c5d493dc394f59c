/**
 * The page in Debian's Firefox (firefox-esr, headless, driven over WebDriver BiDi) under the server's
 * Content-Security-Policy: the fake driver's live numbers appear and update, a hostile command line shows as
 * text, nothing is logged as an error and no request leaves the origin.
 */
import { describe, expect, it } from 'vitest';
import { writeScenario } from '../fake-nvml/scenario.js';
import { firefoxSuite } from './firefox-suite.js';
import { HOSTILE } from './harness.js';

const suite = firefoxSuite({ intervalMs: 200 });

describe('the page in Firefox', () => {
  it('shows live GPUs and processes, updates them, and shows a hostile command line as text', async () => {
    const { h, ff: f } = suite;
    const poll = f.poll.bind(f);
    await f.send('session.subscribe', { events: ['log.entryAdded', 'network.beforeRequestSent'] });
    const { context } = await f.send('browsingContext.create', { type: 'tab' }) as { context: string };
    await f.send('browsingContext.navigate', { context, url: `${h.base}/#token=${h.token}`, wait: 'complete' });

    const gpu0 = `document.querySelector('.gpu[data-index="0"] .mem')?.textContent ?? ''`;
    expect(await poll(context, gpu0, (v) => v.includes('19.53 GiB'))).toContain('19.53 GiB / 79.65 GiB · util 87% · 58°C · 412 W');
    writeScenario(h.scenarioPath, h.scenario(30_000, 12));
    expect(await poll(context, gpu0, (v) => v.includes('29.30 GiB'))).toContain('29.30 GiB / 79.65 GiB · util 12%');

    const hostile = `document.querySelector('#processes tr[data-pid="${h.hostilePid}"] td.cmd')?.textContent ?? ''`;
    expect(await f.evaluate(context, hostile)).toBe(`/bin/sh -c sleep 60 ${HOSTILE}`);
    expect(await f.evaluate(context, `document.querySelectorAll('#processes img, #processes script').length`)).toBe(0);
    expect(await f.evaluate(context, 'document.title')).toBe('gpumem');
    expect(await poll(context, `String(document.querySelectorAll('#chart-memory canvas').length)`, (v) => v !== '0')).not.toBe('0');
    expect(await f.evaluate(context, `document.querySelectorAll('#processes tr[data-pid="${h.trainerPid}"] button').length`)).toBe(1);

    const origin = new URL(h.base).origin;
    const urls = f.events.filter((e) => e.method === 'network.beforeRequestSent').map((e) => (e.params.request as { url: string }).url);
    expect(urls.length).toBeGreaterThan(0);
    // data: URLs never reach the network: the page's empty favicon and a font of Firefox's own stylesheet.
    expect(urls.filter((u) => !u.startsWith('data:') && new URL(u).origin !== origin)).toEqual([]);
    const problems = f.events.filter((e) => e.method === 'log.entryAdded' && ['error', 'warn'].includes(String(e.params.level)))
      .map((e) => String(e.params.text));
    expect(problems).toEqual([]);
  }, 30_000);
});
