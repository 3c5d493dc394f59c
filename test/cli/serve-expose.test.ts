/**
 * `gpumem serve` on a scraped port: an address beyond loopback needs --expose and then HTTPS or a read token;
 * the read token guards /metrics and /api/, HTTPS serves the certificate given, actions stay off unless
 * --actions. Real processes, a real certificate made by openssl.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { makeCertificate } from '../helpers/tls-cert.js';

const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-serve-expose-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const scenario = join(dir, 'scenario.txt');
writeScenario(scenario, { driverVersion: '590.48.01', cudaVersion: 13010, devices: [fakeH100(0)] });
const env = { PATH: '/usr/bin:/bin', XDG_DATA_HOME: dir, XDG_RUNTIME_DIR: dir, ...fakeNvmlEnv('590', scenario) };
const READ = 'read-token-0123456789abcdef';

interface Served { code: number | null; stdout: string; stderr: string }

/** Starts serve, waits for its address line, runs `probe` with the port, then stops it with SIGINT. */
async function serve(args: string[], probe: (port: number, stdout: string) => Promise<void>, extraEnv: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--source', 'nvml', ...args], { env: { ...env, ...extraEnv } });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      const m = /https?:\/\/[^/]+:(\d+)\/ .*\n.*\n/.exec(stdout);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  await probe(port, stdout);
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.kill('SIGINT');
  });
  return { code, stdout, stderr };
}

function refused(args: string[], extraEnv: Record<string, string> = {}): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--source', 'nvml', ...args], { env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 15_000 });
  return { status: r.status, stderr: r.stderr };
}

describe('gpumem serve beyond loopback', () => {
  it('refuses an address that is not loopback without --expose, and --expose without HTTPS or a read token', () => {
    const bare = refused(['--host', '0.0.0.0']);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toMatch(/^gpumem: error: --host 0\.0\.0\.0 is not loopback: .*\nhint: add --expose with --tls-cert\/--tls-key or a read token/);
    const open = refused(['--host', '0.0.0.0', '--expose']);
    expect(open.status).toBe(2);
    expect(open.stderr).toMatch(/^gpumem: error: --expose on 0\.0\.0\.0 needs HTTPS \(--tls-cert and --tls-key\) or a read token/);
    expect(refused(['--host', '0.0.0.0', '--expose'], { GPUMEM_SERVE_READ_TOKEN: 'short' }).stderr).toMatch(/GPUMEM_SERVE_READ_TOKEN: a read token needs 16 to 256 characters/);
    expect(refused(['--tls-cert', join(dir, 'missing.pem')]).stderr).toMatch(/--tls-cert needs --tls-key too/);
  });

  it('with --expose and a read token file: /metrics and /api/ need the token, the page files do not, actions are off', async () => {
    const tokenFile = join(dir, 'read-token');
    writeFileSync(tokenFile, `${READ}\n`, { mode: 0o600 });
    const r = await serve(['--host', '0.0.0.0', '--expose', '--read-token-file', tokenFile], async (port) => {
      const base = `http://127.0.0.1:${port}`;
      const bare = await fetch(`${base}/metrics`);
      expect(bare.status).toBe(401);
      expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="gpumem"');
      expect((await fetch(`${base}/api/v1/status`)).status).toBe(401);
      expect((await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      const ok = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${READ}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('DCGM_FI_DEV_FB_USED{');
      expect((await fetch(`${base}/api/v1/server`, { headers: { Authorization: `Bearer ${READ}` } })).status).toBe(200);
      expect((await fetch(`${base}/`)).status).toBe(200);
      const kill = await fetch(`${base}/api/v1/processes/${process.pid}/kill`, { method: 'POST', headers: { Authorization: `Bearer ${READ}` } });
      expect(kill.status).toBe(403);
    });
    expect(r.stdout).toContain('read-only: processes cannot be ended');
    expect(r.stdout).not.toContain('actions token');
    expect(r.code).toBe(0);
  });

  it('--actions turns actions on over the network, with the action token', async () => {
    const r = await serve(['--host', '0.0.0.0', '--expose', '--actions'], async (port, stdout) => {
      const action = /actions token: (\S+)/.exec(stdout)?.[1];
      expect(action).toBeDefined();
      // The action token reads too; the read token does not act.
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/server`, { headers: { Authorization: `Bearer ${action}` } })).status).toBe(200);
      const kill = await fetch(`http://127.0.0.1:${port}/api/v1/processes/${process.pid}/kill`, { method: 'POST', headers: { Authorization: `Bearer ${READ}` } });
      expect(kill.status).toBe(401);
    }, { GPUMEM_SERVE_READ_TOKEN: READ });
    expect(r.code).toBe(0);
  });

  it('serves HTTPS with the certificate given, and only HTTPS', async () => {
    const cert = makeCertificate(dir);
    const r = await serve(['--host', '0.0.0.0', '--expose', '--tls-cert', cert.certPath, '--tls-key', cert.keyPath], async (port) => {
      const body = await new Promise<string>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path: '/metrics', ca: cert.cert, servername: 'localhost' }, (res) => {
          let text = '';
          res.on('data', (b: Buffer) => { text += b.toString(); });
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        }).on('error', reject);
      });
      expect(body).toMatch(/^200 [\s\S]*DCGM_FI_DEV_FB_USED\{/);
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
    });
    expect(r.stdout).toMatch(/^gpumem serve: https:\/\/0\.0\.0\.0:\d+\//);
    expect(r.code).toBe(0);
  });

  it('a key that does not belong to a certificate is one error line', () => {
    const bad = join(dir, 'bad.pem');
    writeFileSync(bad, 'not a pem\n');
    const r = refused(['--tls-cert', bad, '--tls-key', bad]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^gpumem: error: --tls-cert\/--tls-key: .*\nhint: give a PEM certificate chain/);
  });
});

/** The openssl the test needs is there (Debian's openssl package). */
it('openssl is available', () => {
  expect(spawnSync('openssl', ['version']).status).toBe(0);
});
