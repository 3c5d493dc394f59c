/** Runs from the history over the API and on /metrics, with the same documents as `gpumem runs --json`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OOM_TEXT, RUN_UUID } from './history-fixture.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ dbPath: 'fixture' });
});
afterAll(() => h.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const get = async (path: string): Promise<any> => JSON.parse(await (await fetch(`${h.base}${path}`)).text());

describe('history over the API', () => {
  it('lists runs newest first and shows one with its stored report', async () => {
    const list = await get('/api/v1/runs');
    expect(list.schemaVersion).toBe(1);
    expect(list.runs.map((r: { argv: string[]; status: string }) => [r.argv.join(' '), r.status])).toEqual([['python eval.py', 'running'], ['python train.py --bs 64', 'failed']]);
    const id = list.runs[1].id;
    const one = await get(`/api/v1/runs/${id}`);
    expect(one.run.peakBytes).toBe(10 * 1024 ** 3);
    expect(one.report.attempts[0].ooms[0].text).toBe(OOM_TEXT);
    const samples = await get(`/api/v1/runs/${id}/samples`);
    expect(samples.attempts).toHaveLength(1);
    expect(samples.attempts[0].timeline).toHaveLength(20);
    expect(samples.attempts[0].timeline[19]).toEqual({ tMs: 1900, bytes: { [RUN_UUID]: 10 * 1024 ** 3 } });
  });

  it('counts runs by state and OOM events on /metrics', async () => {
    const text = await (await fetch(`${h.base}/metrics`)).text();
    expect(text).toContain('gpumem_runs{state="running"} 1\n');
    expect(text).toContain('gpumem_runs{state="failed"} 1\n');
    expect(text).toContain('gpumem_history_oom_events_total 1\n');
  });

  it('a bad run id or limit is a clear error, not a crash', async () => {
    expect((await fetch(`${h.base}/api/v1/runs/99999`)).status).toBe(404);
    expect((await fetch(`${h.base}/api/v1/runs?limit=abc`)).status).toBe(400);
    expect((await fetch(`${h.base}/api/v1/runs/1x`)).status).toBe(404);
  });
});
