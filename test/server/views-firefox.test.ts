/**
 * The page's other views in Debian's Firefox (headless, over WebDriver BiDi), checked with the same numbers as
 * in Chromium (page.test.ts, page-snapshot.test.ts): the runs list, a run's OOM and step timing, two runs
 * compared, and a snapshot file chosen on the page and analysed with a typed what-if setting. Table rows are
 * read through innerText, whose tab-separated cells are Firefox's own.
 */
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../src/core/index.js';
import { simulateSnapshot } from '../../src/core/allocator/index.js';
import { buildReport } from '../../src/core/snapshot/index.js';
import { readSnapshotFile } from '../../src/sources/index.js';
import { firefoxSuite } from './firefox-suite.js';
import { EVAL_PID, OOM_TEXT, TRAIN_PID } from './history-fixture.js';

const REAL = '/work/shared/fixtures/snapshots-real/constructor_memory_snapshot.pickle';
const WHAT_IF = 'expandable_segments:False';
const suite = firefoxSuite({ intervalMs: 500, dbPath: 'fixture' }, ['log.entryAdded']);
const poll = (context: string, expression: string, check: (v: string) => boolean, timeoutMs?: number): Promise<string> =>
  suite.ff.poll(context, expression, check, timeoutMs);

async function open(hash: string): Promise<string> {
  const { context } = (await suite.ff.send('browsingContext.create', { type: 'tab' })) as { context: string };
  await suite.ff.send('browsingContext.navigate', { context, url: `${suite.h.base}/${hash}`, wait: 'complete' });
  return context;
}

/** Errors and warnings the pages logged so far. */
const problems = (): string[] =>
  suite.ff.events.filter((e) => e.method === 'log.entryAdded' && ['error', 'warn'].includes(String(e.params.level))).map((e) => String(e.params.text));

/** The cells of the first row of `table` that contains `label`, as innerText splits them. */
const cellsOf = (table: string, label: string): string =>
  `[...document.querySelectorAll('${table} tr')].find((r) => r.textContent.includes(${JSON.stringify(label)}))?.innerText ?? ''`;

describe('the page in Firefox, beyond the live view', () => {
  it("lists runs, shows a run's OOM and step timing, and compares two runs", async () => {
    const c = await open('#runs');
    expect(await poll(c, `String(document.querySelectorAll('#runs tbody tr').length)`, (v) => v === '2')).toBe('2');
    const second = await suite.ff.evaluate(c, `document.querySelectorAll('#runs tbody tr')[1].textContent`);
    expect(second).toContain('python train.py --bs 64');
    expect(second).toContain('10.00 GiB');
    await suite.ff.evaluate(c, `document.querySelectorAll('#runs tbody tr')[1].click()`);
    expect(await poll(c, `document.querySelector('#run-ooms li')?.textContent ?? ''`, (v) => v !== '')).toBe(`attempt 1, line 42: ${OOM_TEXT}`);
    expect(await suite.ff.evaluate(c, `document.querySelectorAll('#run-ooms b').length`)).toBe(0); // the OOM text stays text
    const steps = `[...document.querySelectorAll('#run-steps li')].map((li) => li.textContent).join('\\n')`;
    expect(await poll(c, steps, (v) => v.includes('pid'))).toBe([
      `attempt 1, pid ${EVAL_PID}: 3 steps of 12.5 ms, 5120.0 samples/s, 81920 tokens/s, batch 64`,
      `attempt 1, pid ${TRAIN_PID}: 200 steps of 45.0 ms, 40% waiting for data, 1422.2 samples/s, batch 64 (asked 64)`,
    ].join('\n'));
    expect(await poll(c, `String(document.querySelectorAll('#chart-run canvas').length)`, (v) => v !== '0')).not.toBe('0');

    // Opening the other run fills the comparison with both: the finished run's peak, the running one's dash.
    await suite.ff.evaluate(c, `document.querySelectorAll('#runs tbody tr')[0].click()`);
    expect(await poll(c, `document.getElementById('cmp-b').value`, (v) => v !== '')).not.toBe('');
    await suite.ff.evaluate(c, `document.querySelector('#compare-form button').click()`);
    const peak = cellsOf('#compare', 'attempt 1: peak per GPU');
    expect((await poll(c, peak, (v) => v !== '')).split('\t')).toEqual(['attempt 1: peak per GPU', '–', 'GPU 0 10.00 GiB']);
    expect(String(await suite.ff.evaluate(c, cellsOf('#compare', 'data-wait share'))).split('\t')).toEqual(['data-wait share of step time', '–', '40%']);
    expect(String(await suite.ff.evaluate(c, cellsOf('#compare', 'samples/s'))).split('\t')).toEqual(['samples/s', '–', '1422.2']);
    expect(problems()).toEqual([]);
  }, 30_000);

  it("analyses a chosen snapshot file with the typed what-if, with gpumem snapshot's numbers", async () => {
    const snapshot = readSnapshotFile(REAL);
    const device = buildReport(snapshot, { top: 10, requestBytes: null }).devices[0]!;
    const w = simulateSnapshot(snapshot, [WHAT_IF], null).find((s) => s.device === device.device)!.whatIf[0]!;
    const c = await open('#snapshot');
    await suite.ff.setFiles(c, '#snapshot-file', [REAL]);
    expect(await poll(c, `document.getElementById('snapshot-chosen').textContent`, (v) => v !== '')).toBe('upload: constructor_memory_snapshot.pickle');
    await suite.ff.evaluate(c, `(() => { const t = document.getElementById('snapshot-whatif'); t.value = ${JSON.stringify(WHAT_IF)}; t.dispatchEvent(new Event('input')); })()`);
    await suite.ff.evaluate(c, `document.querySelector('#snapshot-form button').click()`);
    expect(await poll(c, `document.querySelector('#snapshot-result h3')?.textContent ?? ''`, (v) => v !== '', 30_000)).toBe(`GPU ${device.device}`);
    const facts = String(await suite.ff.evaluate(c, `document.querySelector('#snapshot-result table').innerText`));
    expect(facts).toContain(`reserved\t${formatBytes(device.summary.reservedBytes)}`);
    expect(facts).toContain(`allocated\t${formatBytes(device.summary.allocatedBytes)}`);
    const sim = String(await suite.ff.evaluate(c, cellsOf('#snapshot-result', WHAT_IF)));
    expect(sim.split('\t').slice(0, 4)).toEqual([WHAT_IF, formatBytes(w.peakReservedBytes), formatBytes(w.endReservedBytes), String(w.endSegmentCount)]);
    expect(await suite.ff.evaluate(c, `document.getElementById('snapshot-status').textContent`)).toBe('upload');
    expect(problems()).toEqual([]);
  }, 45_000);
});
