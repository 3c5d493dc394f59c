/** `gpumem serve` as a user runs it: what it prints, the loud warning off loopback, --readonly, bad options. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';

const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-serve-cli-'));
const scenario = join(dir, 'scenario.txt');
writeScenario(scenario, { driverVersion: '590.48.01', cudaVersion: 13010, devices: [fakeH100(0)] });
const env = { PATH: '/nonexistent', XDG_DATA_HOME: dir, XDG_RUNTIME_DIR: dir, ...fakeNvmlEnv('590', scenario) };

/** Starts serve, waits for its first lines, runs `probe`, then stops it with SIGINT and returns everything. */
async function serve(args: string[], probe: (base: string, out: string) => Promise<void>, extraEnv: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--source', 'nvml', ...args], { env: { ...env, ...extraEnv } });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      const m = /http:\/\/(\d+\.\d+\.\d+\.\d+):(\d+)\//.exec(stdout);
      if (m && stdout.includes('\n', m.index) && /\n.*\n/.test(stdout)) resolve(`http://127.0.0.1:${m[2]}`);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  await probe(base, stdout);
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', (c) => resolve(c));
    child.kill('SIGINT');
  });
  return { code, stdout, stderr };
}

describe('gpumem serve', () => {
  it('listens on loopback, prints where and the token, and stops cleanly on Ctrl-C', async () => {
    const r = await serve(['--token', 'abcdefghijklmnop0123'], async (base) => {
      expect((await fetch(`${base}/api/v1/server`)).status).toBe(200);
    });
    expect(r.stdout).toMatch(/^gpumem serve: http:\/\/127\.0\.0\.1:\d+\/ {2}\(metrics http:\/\/127\.0\.0\.1:\d+\/metrics, API http:\/\/127\.0\.0\.1:\d+\/api\/v1\/\)\n/);
    expect(r.stdout).toContain('actions token: abcdefghijklmnop0123');
    // A token on the command line is readable by every local user; the environment variable is not.
    expect(r.stderr).toBe('gpumem serve: warning: --token is visible to every user of this machine in the process list (/proc/PID/cmdline); set GPUMEM_SERVE_TOKEN instead\n');
    expect(r.code).toBe(0);
  });

  it('says loudly when it listens beyond loopback, and --readonly refuses actions', async () => {
    const read = { GPUMEM_SERVE_READ_TOKEN: 'read-token-0123456789' };
    const r = await serve(['--host', '0.0.0.0', '--expose', '--readonly'], async (base) => {
      const res = await fetch(`${base}/api/v1/processes/${process.pid}/kill`, { method: 'POST', headers: { Authorization: `Bearer ${read.GPUMEM_SERVE_READ_TOKEN}` } });
      expect(res.status).toBe(403);
    }, read);
    expect(r.stderr).toMatch(/^WARNING: listening on 0\.0\.0\.0, not loopback: anyone with the read token sees every GPU process, its user and full command line\.\n$/);
    expect(r.stdout).toContain('read-only: processes cannot be ended');
    expect(r.stdout).not.toContain('actions token');
    expect(r.code).toBe(0);
  });

  it('a port out of range or a short token is a usage error (exit 2, one line and a hint)', () => {
    for (const args of [['--port', '70000'], ['--token', 'short']]) {
      const r = spawnSync(process.execPath, [BIN, 'serve', ...args], { env, encoding: 'utf8', timeout: 15_000 });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^gpumem: error: .*\nhint: .*\n$/);
    }
  });
});
