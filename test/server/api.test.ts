/** The JSON API, the safety rules and server-sent events of gpumem serve, over HTTP in this process. */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src/server/index.js';
import { HOSTILE, MiB, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** The JSON body of a response (untyped, as a script would read it). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function json(res: Response): Promise<any> {
  return JSON.parse(await res.text());
}

/** A raw request (fetch cannot set Host). */
function raw(path: string, headers: Record<string, string>, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: h.port, path, method, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('JSON API', () => {
  it('/api/v1/status is the document of gpumem status --json', async () => {
    const doc = await json(await fetch(`${h.base}/api/v1/status`));
    expect(doc.schemaVersion).toBe(1);
    expect(doc.kind).toBe('gpumem.status');
    expect(doc.source.kind).toBe('nvml');
    expect(doc.devices[0].memory).toEqual({ totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 20_000 * MiB, freeBytes: (81559 - 479 - 20_000) * MiB });
    const hostile = doc.processes.find((p: { pid: number }) => p.pid === h.hostilePid);
    expect(hostile.host.cmdline).toEqual(['/bin/sh', '-c', 'sleep 60', HOSTILE]);
  });

  it('/api/v1/processes, /api/v1/findings and /api/v1/diagnosis', async () => {
    const procs = await json(await fetch(`${h.base}/api/v1/processes`));
    expect(procs.processes.map((p: { pid: number; usedBytes: number }) => [p.pid, p.usedBytes]).sort()).toEqual(
      [[h.trainerPid, (20_000 - 1024) * MiB], [h.hostilePid, 1024 * MiB]].sort(),
    );
    const findings = await json(await fetch(`${h.base}/api/v1/findings`));
    expect(findings.kind).toBe('gpumem.findings');
    expect(Array.isArray(findings.findings)).toBe(true);
    const diagnosis = await json(await fetch(`${h.base}/api/v1/diagnosis`));
    expect(diagnosis.command).toBe('diagnose');
    expect(diagnosis.accounting[0].usedBytes ?? diagnosis.accounting[0].used ?? null).not.toBeUndefined();
    expect(diagnosis.findings).toEqual(findings.findings);
  });

  it('/api/v1/live returns the bounded history the charts plot', async () => {
    await h.sampler.sampleNow();
    const doc = await json(await fetch(`${h.base}/api/v1/live?last=2`));
    expect(doc.samples).toHaveLength(2);
    expect(doc.samples[1].devices[0]).toEqual({ index: 0, usedBytes: 20_000 * MiB, totalBytes: 81559 * MiB, gpuPct: 87, memoryPct: 17 });
    expect((await fetch(`${h.base}/api/v1/live?last=-1`)).status).toBe(400);
  });

  it('runs without a history are an empty list, an unknown run is 404', async () => {
    expect(await json(await fetch(`${h.base}/api/v1/runs`))).toEqual({ schemaVersion: 1, runs: [], pipelines: [] });
    const missing = await fetch(`${h.base}/api/v1/runs/7`);
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.code).toBe('NOT_FOUND');
  });
});

describe('safety', () => {
  it('every response carries the Content-Security-Policy; the page has no inline script', async () => {
    for (const path of ['/', '/assets/app.js', '/api/v1/status', '/nope']) {
      const res = await fetch(`${h.base}${path}`);
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    const html = await (await fetch(`${h.base}/`)).text();
    expect(html).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(html).not.toMatch(/https?:\/\//);
    expect((await fetch(`${h.base}/assets/uPlot.iife.min.js`)).status).toBe(200);
  });

  it('answers only to loopback host names (no DNS rebinding)', async () => {
    expect((await raw('/api/v1/status', { Host: 'attacker.example:80' })).status).toBe(421);
    expect((await raw('/api/v1/status', { Host: `localhost:${h.port}` })).status).toBe(200);
    expect((await raw('/api/v1/status', { Host: `[::1]:${h.port}` })).status).toBe(200);
  });

  it('actions need POST and the token; a wrong token changes nothing', async () => {
    expect((await raw(`/api/v1/processes/${h.trainerPid}/kill`, {}, 'GET')).status).toBe(405);
    expect((await raw(`/api/v1/processes/${h.trainerPid}/kill`, {}, 'POST')).status).toBe(401);
    expect((await raw(`/api/v1/processes/${h.trainerPid}/kill`, { Authorization: 'Bearer wrong-token-0123456789ab' }, 'POST')).status).toBe(401);
    expect(h.children[0]!.exitCode).toBeNull();
    expect(h.children[0]!.signalCode).toBeNull();
  });

  it('with the token, kill\'s checks still apply: a process with no NVIDIA device open is refused', async () => {
    const r = await raw(`/api/v1/processes/${h.trainerPid}/kill`, { Authorization: `Bearer ${h.token}` }, 'POST');
    expect(r.status).toBe(409);
    const doc = JSON.parse(r.body);
    expect(doc.outcomes).toEqual([{ pid: h.trainerPid, outcome: 'refused', detail: expect.stringMatching(/no NVIDIA device open/) }]);
    expect(h.children[0]!.signalCode).toBeNull();
    const init = await raw('/api/v1/processes/1/kill', { Authorization: `Bearer ${h.token}` }, 'POST');
    expect(init.status).not.toBe(200);
    expect(JSON.parse(init.body).outcomes ?? []).not.toContainEqual(expect.objectContaining({ outcome: 'terminated' }));
  });
});

describe('server-sent events', () => {
  it('sends the newest sample at once and every new one after, with page-ready text', async () => {
    const controller = new AbortController();
    const res = await fetch(`${h.base}/api/v1/events`, { signal: controller.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/\n\n/g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const messages = text.split('\n\n').filter((m) => m.startsWith('event: sample')).map((m) => JSON.parse(m.slice(m.indexOf('data: ') + 6)));
    expect(messages.length).toBeGreaterThanOrEqual(3);
    expect(messages[2].live.timeMs).toBeGreaterThan(messages[0].live.timeMs);
    const view = messages[0].view;
    expect(view.gpus[0]).toMatchObject({ index: 0, usedText: '19.53 GiB', totalText: '79.65 GiB', utilText: '87%', tempText: '58°C', powerText: '412 W' });
    expect(view.processes.find((p: { pid: number }) => p.pid === h.hostilePid).command).toBe(`/bin/sh -c sleep 60 ${HOSTILE}`);
  });

  it('a client that does not read never stalls sampling', async () => {
    const before = h.sampler.latest()!.timeMs;
    const stuck = await new Promise<import('node:http').IncomingMessage>((resolve) => {
      const req = request({ host: '127.0.0.1', port: h.port, path: '/api/v1/events' }, resolve);
      req.end();
    });
    stuck.pause();
    await new Promise((r) => setTimeout(r, 1500));
    expect(h.sampler.latest()!.timeMs).toBeGreaterThan(before + 1000);
    stuck.destroy();
  });
});
