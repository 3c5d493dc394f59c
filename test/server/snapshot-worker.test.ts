/**
 * A snapshot analysis runs off the event loop: while a 23 MB trace is replayed under 8 what-if settings,
 * /metrics still answers (it completes before the upload's answer), and an analysis over its time budget is
 * stopped with one clear error while the server goes on.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

const GEN = new URL('../fixtures/snapshot/gen.py', import.meta.url).pathname;
const REAL = '/work/shared/fixtures/snapshots-real/constructor_memory_snapshot.pickle';
const WHAT_IFS = [
  'expandable_segments:True', 'expandable_segments:False', 'garbage_collection_threshold:0.5', 'max_split_size_mb:128',
  'max_split_size_mb:256', 'garbage_collection_threshold:0.8', 'expandable_segments:True,max_split_size_mb:64', 'roundup_power2_divisions:4',
];
const QUERY = new URLSearchParams([['simulate', '1'], ...WHAT_IFS.map((w): [string, string] => ['whatIf', w])]).toString();
const dir = mkdtempSync(join(tmpdir(), 'gpumem-serve-worker-'));
const big = join(dir, 'big.pickle');
let h: Harness;
let slow: Harness;

beforeAll(async () => {
  // The generator's large snapshot: about 23 MB, a long trace (the size whose replay blocked the server for seconds).
  const made = spawnSync('python3', [GEN, 'bench', big, '23'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(made.stderr);
  h = await startHarness();
  slow = await startHarness({ app: { analysis: { timeMs: 300 } } });
}, 60_000);

afterAll(async () => {
  await h?.close();
  await slow?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Uploads `body`; `sent` resolves once the whole body is handed to the kernel, `answer` with the status and body. */
function upload(base: string, token: string, query: string, body: Buffer): { sent: Promise<void>; answer: Promise<{ status: number; body: string }> } {
  const url = new URL(`/api/v1/snapshots?${query}`, base);
  let sent!: () => void;
  const sentP = new Promise<void>((resolve) => (sent = resolve));
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Length': String(body.length) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body, () => sent());
  });
  return { sent: sentP, answer };
}

describe('snapshot analysis in a worker thread', () => {
  it('/metrics answers while a what-if replay of a 23 MB trace runs, before the upload is answered', async () => {
    const query = QUERY;
    const order: string[] = [];
    const up = upload(h.base, h.token, query, readFileSync(big));
    const done = up.answer.then((a) => {
      order.push('upload');
      return a;
    });
    await up.sent;
    // The test shares the server's event loop: on a blocked loop this timer could fire only after the analysis.
    await sleep(200);
    const metrics = await fetch(`${h.base}/metrics`);
    order.push('metrics');
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('DCGM_FI_DEV_FB_USED');
    const answer = await done;
    expect(answer.status, answer.body).toBe(200);
    expect(JSON.parse(answer.body).devices[0].simulation.whatIf).toHaveLength(WHAT_IFS.length);
    expect(order).toEqual(['metrics', 'upload']);
  }, 120_000);

  it('an analysis over its time budget is stopped with one clear error, its slot given back, and the server goes on', async () => {
    const query = QUERY;
    const stopped = await upload(slow.base, slow.token, query, readFileSync(big)).answer;
    expect(stopped.status).toBe(503);
    expect(JSON.parse(stopped.body).error).toEqual({
      code: 'ANALYSIS_TIMEOUT', message: 'upload: the analysis took over 0.3 s and was stopped; run gpumem snapshot FILE on the command line',
    });
    expect(slow.app.work.running).toBe(0);
    expect(slow.app.work.heldBytes).toBe(0);
    expect((await fetch(`${slow.base}/metrics`)).status).toBe(200);
  }, 120_000);

  it('a server that stops ends its running analyses (Ctrl-C does not wait for a replay) and answers 503', async () => {
    const stopping = await startHarness();
    try {
      const up = upload(stopping.base, stopping.token, QUERY, readFileSync(big));
      await up.sent;
      while (stopping.app.work.running === 0) await sleep(10);
      stopping.app.close();
      const answer = await up.answer;
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body).error.code).toBe('STOPPING');
    } finally {
      await stopping.close();
    }
  }, 120_000);

  it('the page\'s view of an upload comes from the worker too (the real fixture, a what-if)', async () => {
    const res = await fetch(`${h.base}/api/v1/snapshots?whatIf=expandable_segments:True&view=page`, { method: 'POST', body: readFileSync(REAL), headers: { Authorization: `Bearer ${h.token}` } });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { kind: string; devices: Array<{ simulations: unknown[] }> };
    expect(doc.kind).toBe('gpumem.page-snapshot');
    expect(doc.devices[0]!.simulations.length).toBeGreaterThan(0);
  });
});
