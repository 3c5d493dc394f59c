/**
 * Who may upload a snapshot and how much the server takes at once: the token, or the page's own header
 * from the same origin (never a request a browser marks as cross-site); uploads over the bounds answer
 * 503 with Retry-After before their body is read, and a client that leaves mid-upload gives its share back.
 */
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

const REAL = '/work/shared/fixtures/snapshots-real/constructor_memory_snapshot.pickle';
const MiB = 1024 * 1024;
let h: Harness;
let ro: Harness;
let tight: Harness;
let oneJob: Harness;

beforeAll(async () => {
  [h, ro, tight, oneJob] = await Promise.all([
    startHarness(),
    startHarness({ readonly: true }),
    // Room for one upload of the 2.6 MB fixture at a time.
    startHarness({ app: { work: { maxJobs: 4, maxBytes: 3 * MiB } } }),
    startHarness({ app: { work: { maxJobs: 1 } } }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([h, ro, tight, oneJob].map((x) => x?.close()));
});

const post = (x: Harness, headers: Record<string, string>, body: Buffer | string = readFileSync(REAL)): Promise<Response> =>
  fetch(`${x.base}/api/v1/snapshots?top=1`, { method: 'POST', body, headers });

describe('who may upload', () => {
  it('refuses a request with neither the token nor the page header (a no-cors text/plain POST from another site)', async () => {
    const res = await post(h, { 'Content-Type': 'text/plain', Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('TOKEN');
    expect((await post(h, {})).status).toBe(401);
    expect((await post(h, { Authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
  });

  it('takes the token, and the page header from the same origin', async () => {
    expect((await post(h, { Authorization: `Bearer ${h.token}` })).status).toBe(200);
    // What a browser sends with the page's fetch: same-origin by Sec-Fetch-Site and Origin.
    expect((await post(h, { 'X-Gpumem-Page': '1', 'Sec-Fetch-Site': 'same-origin', Origin: h.base })).status).toBe(200);
    // Behind a TLS proxy the page's Origin is https and names the proxy; the browser still says same-origin.
    expect((await post(h, { 'X-Gpumem-Page': '1', 'Sec-Fetch-Site': 'same-origin', Origin: 'https://gpu.example' })).status).toBe(200);
    // An older browser without Sec-Fetch-Site is judged by Origin.
    expect((await post(h, { 'X-Gpumem-Page': '1', Origin: h.base })).status).toBe(200);
    // A page opened with a stale token still uploads: the header alone is enough from the page.
    expect((await post(h, { 'X-Gpumem-Page': '1', Authorization: 'Bearer stale-token-0123456789' })).status).toBe(200);
  });

  it('refuses the page header on a request the browser marks as coming from elsewhere', async () => {
    const cases: Array<Record<string, string>> = [
      { 'X-Gpumem-Page': '1', 'Sec-Fetch-Site': 'cross-site' },
      { 'X-Gpumem-Page': '1', 'Sec-Fetch-Site': 'same-site' },
      { 'X-Gpumem-Page': '1', Origin: 'http://evil.example' },
      { 'X-Gpumem-Page': '1', Origin: 'null' },
      { 'X-Gpumem-Page': '1', Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' },
      { 'X-Gpumem-Page': 'yes' },
    ];
    for (const headers of cases) {
      const res = await post(h, headers);
      expect(res.status, JSON.stringify(headers)).toBe(headers['X-Gpumem-Page'] === '1' ? 403 : 401);
    }
  });

  it('a --readonly server (no token at all) takes uploads from its page only', async () => {
    expect((await post(ro, {})).status).toBe(401);
    expect((await post(ro, { Authorization: `Bearer ${ro.token}` })).status).toBe(401);
    expect((await post(ro, { 'X-Gpumem-Page': '1', 'Sec-Fetch-Site': 'same-origin', Origin: ro.base })).status).toBe(200);
  });
});

describe('how much at once', () => {
  it('parallel uploads over the byte bound answer 503 with Retry-After before their body is read', async () => {
    const body = readFileSync(REAL);
    const answers = await Promise.all(Array.from({ length: 4 }, () => post(tight, { Authorization: `Bearer ${tight.token}` }, body)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length, JSON.stringify(statuses)).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 503).length, JSON.stringify(statuses)).toBeGreaterThanOrEqual(1);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.headers.get('retry-after')).toBe('5');
      expect(((await a.json()) as { error: { code: string } }).error.code).toBe('BUSY');
    }
    expect(tight.app.work.heldBytes).toBe(0);
    expect(tight.app.work.running).toBe(0);
  });

  it('an upload without a length is counted as it comes, and refused once it would go over the bound', async () => {
    const chunks = [readFileSync(REAL), readFileSync(REAL)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const res = await fetch(`${tight.base}/api/v1/snapshots`, { method: 'POST', body: stream, headers: { Authorization: `Bearer ${tight.token}` }, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(503);
    expect(tight.app.work.heldBytes).toBe(0);
  });

  it('one job at a time: a second upload waits its turn (503), and a client that leaves mid-upload gives the slot back', async () => {
    // A client that sends its headers and part of the body, then stalls.
    const stalled = connect(oneJob.port, '127.0.0.1');
    await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
    stalled.write(`POST /api/v1/snapshots HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${oneJob.token}\r\nContent-Length: 1000000\r\n\r\n${'x'.repeat(1000)}`);
    while (oneJob.app.work.running === 0) await sleep(10);
    const second = await post(oneJob, { Authorization: `Bearer ${oneJob.token}` });
    expect(second.status).toBe(503);
    stalled.destroy();
    while (oneJob.app.work.running !== 0) await sleep(10);
    expect(oneJob.app.work.heldBytes).toBe(0);
    expect((await post(oneJob, { Authorization: `Bearer ${oneJob.token}` })).status).toBe(200);
  });

  it('a bad query is refused before the body is read and takes no slot', async () => {
    const res = await fetch(`${oneJob.base}/api/v1/snapshots?top=0`, { method: 'POST', body: readFileSync(REAL), headers: { Authorization: `Bearer ${oneJob.token}` } });
    expect(res.status).toBe(400);
    expect(oneJob.app.work.running).toBe(0);
  });
});
