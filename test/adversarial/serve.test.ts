/**
 * `gpumem serve` against a hostile network and hostile files, as a real process: loopback spelled every way
 * keeps the Host check on (DNS rebinding), uploads need the token or the page's own header and cannot grow
 * memory without bound, hostile snapshots and a hostile history answer one JSON error (never a 500 with a
 * stack), a pid no process can have is a clear 400, and a token on the command line is warned about.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { beginRun, completeRun, openHistory, type HistoryReport } from '../../src/store/index.js';
import { tempDir } from './harness.js';
import { ask, RECORDING, serve, type Answer } from './serve-helpers.js';

const TOKEN = 'adversarial-token-0123456789';
const MiB = 1024 * 1024;
const tmp = tempDir('gpumem-adv-serve-');
afterAll(() => tmp.remove());

/** Fails with "ESCAPE" when a request naming another site's host was served. */
function expectHostRefused(a: Answer, what: string): void {
  if (a.status !== 421) throw new Error(`ESCAPE: ${what}: a request with Host: evil.example got ${a.status}, not 421 (DNS rebinding reaches the server)`);
}

/** Fails with "STACK TRACE" when the server answered 500 or its log carries a stack. */
function expectNoServerStack(a: Answer, log: string, what: string): void {
  if (a.status >= 500 || /\n\s+at .+[(:]\d+:\d+\)?|internal error/.test(log)) throw new Error(`STACK TRACE: ${what}: ${a.status} ${a.body.slice(0, 200)}; log: ${log.slice(0, 600)}`);
}

describe('serve: loopback in any spelling keeps the Host check on', () => {
  // [--host as typed, the address to connect to]
  const cases: Array<[string, string]> = [
    ['127.1', '127.0.0.1'], ['0x7f.1', '127.0.0.1'], ['127.0.0.2', '127.0.0.2'], ['::ffff:127.0.0.1', '127.0.0.1'],
    ['0:0:0:0:0:0:0:1', '::1'], ['[::1]', '::1'], ['localhost', 'localhost'],
  ];
  for (const [host, address] of cases) {
    it(`--host ${host}: a foreign Host is refused (421), a loopback one served, no "not loopback" warning`, async () => {
      const s = await serve(['--replay', RECORDING, '--readonly', '--host', host]);
      try {
        expectHostRefused(await ask(address, s.port, '/api/v1/server', { headers: { Host: 'evil.example' } }), `--host ${host}`);
        expect((await ask(address, s.port, '/api/v1/server', { headers: { Host: `localhost:${s.port}` } })).status).toBe(200);
      } finally {
        await s.stop();
      }
      expect(s.stderr()).not.toMatch(/not loopback/);
    });
  }

  it('--host 0.0.0.0 is not loopback: still warned about (exposed on purpose, with a read token)', async () => {
    const s = await serve(['--replay', RECORDING, '--readonly', '--host', '0.0.0.0', '--expose'], { GPUMEM_SERVE_READ_TOKEN: TOKEN });
    // The warning follows the lines serve() waits for: a Ctrl-C before it is printed would end serve first.
    for (let i = 0; i < 100 && !s.stderr().includes('\n'); i++) await new Promise((r) => setTimeout(r, 50));
    await s.stop();
    expect(s.stderr()).toMatch(/^WARNING: listening on 0\.0\.0\.0, not loopback/);
  });
});

describe('serve: the token', () => {
  it('--token on the command line is warned about (every local user can read it), GPUMEM_SERVE_TOKEN is not', async () => {
    const onLine = await serve(['--replay', RECORDING, '--token', TOKEN]);
    await onLine.stop();
    expect(onLine.stderr()).toBe('gpumem serve: warning: --token is visible to every user of this machine in the process list (/proc/PID/cmdline); set GPUMEM_SERVE_TOKEN instead\n');
    const fromEnv = await serve(['--replay', RECORDING], { GPUMEM_SERVE_TOKEN: TOKEN });
    await fromEnv.stop();
    expect(fromEnv.stdout()).toContain(`actions token: ${TOKEN}`);
    expect(fromEnv.stderr()).toBe('');
  });

  it('a kill of a pid no process can have (10 digits) under --replay says so (400), not "only GET here"', async () => {
    const s = await serve(['--replay', RECORDING], { GPUMEM_SERVE_TOKEN: TOKEN });
    try {
      const a = await ask('127.0.0.1', s.port, '/api/v1/processes/1234567890/kill', { method: 'POST', headers: { Host: 'localhost', Authorization: `Bearer ${TOKEN}` } });
      expect(a.status).toBe(400);
      expect(JSON.parse(a.body).error).toEqual({ code: 'BAD_PID', message: 'not a process id: 1234567890 (pids are whole numbers up to 4194304)' });
      // A pid that could exist is still refused because a recording cannot be acted on.
      const real = await ask('127.0.0.1', s.port, '/api/v1/processes/4194304/kill', { method: 'POST', headers: { Host: 'localhost', Authorization: `Bearer ${TOKEN}` } });
      expect(real.status).toBe(409);
    } finally {
      await s.stop();
    }
  });
});

/** POSTs `sizeBytes` zero bytes (declared in Content-Length, sent in 1 MiB pieces) and resolves with the answer. */
function uploadZeros(port: number, sizeBytes: number): Promise<Answer> {
  const piece = Buffer.alloc(MiB);
  let left = sizeBytes;
  const body = new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, piece.length);
      left -= n;
      this.push(n === piece.length ? piece : piece.subarray(0, n));
    },
  });
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/snapshots', method: 'POST', headers: { Host: 'localhost', Authorization: `Bearer ${TOKEN}`, 'Content-Length': String(sizeBytes) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    // A server that answers before the whole body is in may close the connection under the sender.
    req.on('error', (e) => resolve({ status: 0, headers: {}, body: e.message }));
    body.pipe(req);
  });
}

describe('serve: snapshot uploads', () => {
  it('a page on another site cannot upload (no-cors text/plain POST: no token, no page header)', async () => {
    const s = await serve(['--replay', RECORDING], { GPUMEM_SERVE_TOKEN: TOKEN });
    try {
      const headers = { Host: 'localhost', 'Content-Type': 'text/plain', Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors' };
      const a = await ask('127.0.0.1', s.port, '/api/v1/snapshots?simulate=1', { method: 'POST', headers, body: 'x'.repeat(1000) });
      expect(a.status).toBe(401);
      // The page's header alone does not help a request the browser marks as cross-site.
      const b = await ask('127.0.0.1', s.port, '/api/v1/snapshots', { method: 'POST', headers: { ...headers, 'X-Gpumem-Page': '1' }, body: 'x' });
      expect(b.status).toBe(403);
    } finally {
      await s.stop();
    }
  });

  it('8 parallel 250 MB uploads: the ones over the bound get 503 with Retry-After and memory stays bounded', async () => {
    const s = await serve(['--replay', RECORDING], { GPUMEM_SERVE_TOKEN: TOKEN });
    const before = s.rssBytes();
    let answers: Answer[];
    try {
      answers = await Promise.all(Array.from({ length: 8 }, () => uploadZeros(s.port, 250_000_000)));
    } finally {
      await s.stop();
    }
    const grownMiB = Math.round((s.peakRssBytes() - before) / MiB);
    if (grownMiB > 700) throw new Error(`HANG: 8 parallel uploads grew serve by ${grownMiB} MiB (unbounded memory)`);
    const statuses = answers.map((a) => a.status).sort();
    // One body of 250 MB fits the bound (the largest upload); each of the others would go over it.
    expect(statuses.filter((x) => x === 503).length, JSON.stringify(statuses)).toBeGreaterThanOrEqual(6);
    for (const a of answers.filter((x) => x.status === 503)) expect(a.headers['retry-after']).toBe('5');
    expect(statuses.filter((x) => x !== 503).every((x) => x === 400), JSON.stringify(statuses)).toBe(true);
  }, 60_000);

  it('snapshots that broke the reader (toString key, a cycle, deep nesting) answer one JSON error and one log line, never 500', async () => {
    const dir = join(tmp.dir, 'pickles');
    const made = spawnSync('python3', ['-c', `
import os, pickle, sys
sys.setrecursionlimit(1000000)
os.makedirs(sys.argv[1], exist_ok=True)
cycle = []; cycle.append(cycle)
deep = []
for _ in range(20000): deep = [deep]
files = {
  'tostring': {'segments': [{'segment_pool_id': [{'toString': 'x'}], 'blocks': []}]},
  'cycle': {'segments': [], 'device_traces': [], 'allocator_settings': {'x': cycle}},
  'deep-settings': {'segments': [], 'device_traces': [], 'allocator_settings': {'x': deep}},
  'deep-pool': {'segments': [{'segment_pool_id': deep, 'blocks': []}]},
}
for name, value in files.items():
  with open(os.path.join(sys.argv[1], name + '.pickle'), 'wb') as f: pickle.dump(value, f, protocol=2)
`, dir], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const s = await serve(['--replay', RECORDING], { GPUMEM_SERVE_TOKEN: TOKEN });
    const names = ['tostring', 'cycle', 'deep-settings', 'deep-pool'];
    try {
      for (const name of names) {
        const body = spawnSync('cat', [join(dir, `${name}.pickle`)]).stdout;
        const a = await ask('127.0.0.1', s.port, '/api/v1/snapshots?simulate=1', { method: 'POST', headers: { Host: 'localhost', Authorization: `Bearer ${TOKEN}` }, body });
        expectNoServerStack(a, s.stderr(), `upload ${name}.pickle`);
        expect(a.status, `${name}: ${a.body}`).toBeGreaterThanOrEqual(400);
        expect(JSON.parse(a.body).error.message, name).toMatch(/^upload: /);
      }
    } finally {
      await s.stop();
    }
    expectNoServerStack({ status: 200, headers: {}, body: '' }, s.stderr(), 'the server log');
    // At most one line per upload (a parser that refuses the file cleanly logs nothing).
    expect(s.stderr().split('\n').filter((l) => l !== '').length).toBeLessThanOrEqual(names.length);
  }, 60_000);
});

describe('serve: a hostile history database', () => {
  it('a 100 000-deep stored report and a report of the wrong shape answer one JSON error, never 500', async () => {
    const db = join(tmp.dir, 'hostile.db');
    const h = openHistory(db);
    const report = { argv: ['python', 'train.py'], cwd: '/w', startedAtMs: 1, durationMs: 1, gpus: [], env: [], retries: 0, exit: { code: 0, signal: null }, attempts: [] };
    const deep = beginRun(h, { argv: ['python', 'deep.py'], cwd: '/w', startedAtMs: 1 });
    const shape = beginRun(h, { argv: ['python', 'shape.py'], cwd: '/w', startedAtMs: 2 });
    completeRun(h, deep, report as unknown as HistoryReport);
    completeRun(h, shape, report as unknown as HistoryReport);
    h.close();
    const raw = new Database(db);
    raw.prepare('UPDATE runs SET report_json = ? WHERE id = ?').run(`{"attempts":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, deep);
    raw.prepare('UPDATE runs SET report_json = ? WHERE id = ?').run('{"attempts":[{"plugins":{"companion":{"processes":5,"snapshots":7}}}]}', shape);
    raw.close();
    const s = await serve(['--replay', RECORDING, '--readonly', '--db', db]);
    try {
      const paths = [`/api/v1/runs/${deep}`, `/api/v1/runs/${deep}/samples`, `/api/v1/page/runs/${deep}/steps`, `/api/v1/page/runs/${deep}/split`, `/api/v1/runs/${deep}/snapshots`,
        `/api/v1/runs/${shape}`, `/api/v1/page/runs/${shape}/steps`, `/api/v1/page/runs/${shape}/split`, `/api/v1/runs/${shape}/snapshots`, `/api/v1/page/compare?a=${deep}&b=${shape}`,
        '/api/v1/runs', '/api/v1/page/runs'];
      for (const path of paths) {
        const a = await ask('127.0.0.1', s.port, path, { headers: { Host: 'localhost' } });
        expectNoServerStack(a, s.stderr(), `GET ${path}`);
        expect(() => JSON.parse(a.body), path).not.toThrow();
      }
    } finally {
      await s.stop();
    }
  }, 60_000);
});
