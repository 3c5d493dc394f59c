/**
 * Loopback in every spelling, decided by parsing the address (not by matching text), and the Host names a
 * loopback server answers to; a kill path with a pid no process can have is a clear 400.
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostAllowed, isLoopbackAddress } from '../../src/server/http/guard.js';
import { startHarness, type Harness } from './harness.js';

describe('isLoopbackAddress', () => {
  it.each([
    '127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1', '[::1]', 'localhost', 'LOCALHOST',
  ])('%s is loopback', (address) => expect(isLoopbackAddress(address)).toBe(true));

  it.each([
    '0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', '::2', 'example.com', '127.0.0.1.nip.io', 'localhost.', '', '[::1', '127.1',
  ])('%s is not', (address) => expect(isLoopbackAddress(address)).toBe(false));
});

const withHost = (host: string | undefined): IncomingMessage => ({ headers: host === undefined ? {} : { host } }) as IncomingMessage;

describe('hostAllowed on a loopback server', () => {
  for (const bound of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '127.0.0.2']) {
    it(`bound to ${bound}: loopback names pass, others (and shorthand a browser never sends) are refused`, () => {
      for (const host of ['localhost', 'localhost:9488', '127.0.0.1:9488', '127.0.0.2', '[::1]:9488', '[::ffff:127.0.0.1]', '[0:0:0:0:0:0:0:1]']) {
        expect(hostAllowed(withHost(host), bound), host).toBe(true);
      }
      for (const host of ['evil.example', 'evil.example:9488', '127.0.0.1.nip.io', '127.1', '0x7f000001', 'localhost.', '[::2]', '[10.0.0.1]', '', undefined]) {
        expect(hostAllowed(withHost(host), bound), String(host)).toBe(false);
      }
    });
  }

  it('a server bound beyond loopback answers any Host (it is reachable by address anyway)', () => {
    expect(hostAllowed(withHost('evil.example'), '0.0.0.0')).toBe(true);
    expect(hostAllowed(withHost('evil.example'), '::')).toBe(true);
  });
});

describe('kill path with a pid no process can have', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('answers 400 BAD_PID for 10 digits, a number over pid_max and a word; GET still answers "use POST"', async () => {
    const auth = { Authorization: `Bearer ${h.token}` };
    for (const pid of ['1234567890', '4194305', '99999999999999999999', 'abc', '-1']) {
      const res = await fetch(`${h.base}/api/v1/processes/${pid}/kill`, { method: 'POST', headers: auth });
      expect(res.status, pid).toBe(400);
      expect(((await res.json()) as { error: { code: string; message: string } }).error.message).toMatch(/^not a process id: .* \(pids are whole numbers up to 4194304\)$/);
    }
    expect((await fetch(`${h.base}/api/v1/processes/1234567890/kill`)).status).toBe(405);
    // A pid that may exist goes on to the usual checks (pid 1 is refused by them, not as a bad request).
    expect((await fetch(`${h.base}/api/v1/processes/1/kill`, { method: 'POST', headers: auth })).status).not.toBe(400);
  });
});
