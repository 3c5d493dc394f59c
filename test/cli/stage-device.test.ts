/**
 * scripts/stage-device.sh stages the CLI as one bundle for a GPU machine without npm. Every file the bundle reads
 * at run time must travel with it: `gpumem serve` once crashed at start on the H100 with ENOENT on
 * dist/server/assets/index.html. Here the staged bundle is started from its own folder and serves its page, and
 * supervises a run with its watchdog and analyses an uploaded snapshot in its worker (programs of their own,
 * started by path).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { watchServe } from '../helpers/serve-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-stage-'));
const staged = join(dir, 'device');
const SNAPSHOT = join(ROOT, 'test/fixtures/snapshot/real/constructor_memory_snapshot.pickle');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the staged bundle', () => {
  it('stages the server\'s assets, and `serve` started from the staged folder serves its page and /metrics', async () => {
    // dist/ is built by the test setup; --no-node: the Node binary for the GPU machine is not needed here.
    const stage = spawnSync('bash', ['scripts/stage-device.sh', '--no-build', '--no-node', '--out', staged], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(stage.status, stage.stderr).toBe(0);
    expect(existsSync(join(staged, 'dist/server/assets/index.html'))).toBe(true);

    const scenario = join(dir, 'scenario.txt');
    writeScenario(scenario, { driverVersion: '580.159.04', cudaVersion: 13000, devices: [fakeH100(0)] });
    const child = spawn(process.execPath, ['gpumem.mjs', 'serve', '--port', '0', '--source', 'nvml', '--readonly'], {
      cwd: staged, env: { PATH: process.env.PATH, XDG_DATA_HOME: dir, XDG_RUNTIME_DIR: dir, ...fakeNvmlEnv('590', scenario) },
    });
    const served = watchServe(child, 'staged serve');
    const base = await served.base;
    const page = await fetch(`${base}/`);
    const body = await page.text();
    const script = await fetch(`${base}/assets/app.js`);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    // A snapshot upload runs in the analysis worker, which must have travelled with the bundle too.
    const upload = await fetch(`${base}/api/v1/snapshots`, {
      method: 'POST', headers: { 'X-Gpumem-Page': '1', 'Content-Type': 'application/octet-stream' }, body: readFileSync(SNAPSHOT),
    });
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c));
      child.kill('SIGINT');
    });
    expect(page.status).toBe(200);
    expect(body).toContain('<html');
    expect(script.status).toBe(200);
    expect(metrics).toMatch(/^DCGM_FI_DEV_FB_USED\{gpu="0",/m);
    expect(upload.status, await upload.clone().text()).toBe(200);
    expect(served.stderr()).toBe('');
    expect(code).toBe(0);
  });

  it('`run` started from the staged folder starts its watchdog from the staged files', async () => {
    expect(existsSync(join(staged, 'gpumem.mjs')), 'the first test stages the bundle').toBe(true);
    const scenario = join(dir, 'scenario-run.txt');
    writeScenario(scenario, { driverVersion: '580.159.04', cudaVersion: 13000, devices: [fakeH100(0)] });
    const child = spawn(process.execPath, ['gpumem.mjs', 'run', '--no-history', '--no-companion', '--', 'sleep', '3'], {
      cwd: staged, env: { PATH: process.env.PATH, XDG_DATA_HOME: dir, XDG_RUNTIME_DIR: dir, ...fakeNvmlEnv('590', scenario) }, stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    const cmdlineOf = (pid: string): string => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      } catch {
        return '';
      }
    };
    const parentOf = (pid: string): number | null => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      } catch {
        return null;
      }
    };
    let watchdog = '';
    for (let i = 0; i < 100 && !watchdog; i++) {
      await new Promise((r) => setTimeout(r, 50));
      watchdog = readdirSync('/proc').filter((p) => /^\d+$/.test(p) && parentOf(p) === child.pid).map(cmdlineOf).find((c) => c.includes('GPUMEM_RUN_MARK=')) ?? '';
    }
    const code = await exited;
    expect(watchdog).toContain(join(staged, 'dist/supervise/watchdog-main.js'));
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(code).toBe(0);
  }, 30_000);
});
