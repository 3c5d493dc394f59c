/**
 * serve on a scraped port: an address beyond loopback must not open every GPU process's user and command line
 * to the network by a plain --host, and a read token must guard /metrics and the API. A server that listens
 * anyway, or answers without the token, is an ESCAPE (of data, here).
 */
import { describe, expect, it } from 'vitest';
import { expectNoHang, expectNoStackTrace, gpumem } from './harness.js';
import { ask, RECORDING, serve } from './serve-helpers.js';

const READ = 'adversarial-read-token-0123456789';

describe('serve: beyond loopback only when asked, and then guarded', () => {
  for (const host of ['0.0.0.0', '::', '0']) {
    it(`--host ${host} without --expose is refused before listening (exit 2, one line)`, async () => {
      const r = await gpumem(['serve', '--replay', RECORDING, '--readonly', '--port', '0', '--host', host], { timeoutMs: 8000 });
      if (r.timedOut || /^gpumem serve: http/m.test(r.stdout)) throw new Error(`ESCAPE: --host ${host} listened without --expose: ${r.stdout.slice(0, 200)}`);
      expectNoHang(r, `--host ${host}`);
      expectNoStackTrace(r, `--host ${host}`);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^gpumem: error: --host \S+ is not loopback: .*\nhint: add --expose/);
    });
  }

  it('--expose with only a read token: /metrics and /api/ answer 401 without it', async () => {
    const s = await serve(['--replay', RECORDING, '--readonly', '--host', '0.0.0.0', '--expose'], { GPUMEM_SERVE_READ_TOKEN: READ });
    try {
      for (const path of ['/metrics', '/api/v1/processes', '/api/v1/status', '/api/v1/events']) {
        const bare = await ask('127.0.0.1', s.port, path);
        if (bare.status !== 401) throw new Error(`ESCAPE: ${path} answered ${bare.status} without the read token`);
        const wrong = await ask('127.0.0.1', s.port, path, { headers: { Authorization: 'Bearer adversarial-read-token-0123456780' } });
        if (wrong.status !== 401) throw new Error(`ESCAPE: ${path} answered ${wrong.status} to a wrong token`);
      }
      expect((await ask('127.0.0.1', s.port, '/metrics', { headers: { Authorization: `Bearer ${READ}` } })).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});
