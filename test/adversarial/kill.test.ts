/**
 * `gpumem kill` under hostile or mistaken use, against the real NVML binding on the fake driver and real
 * processes: the testing knob pointed at a common path, a zombie, a GPU the machine lacks, and a request
 * whose every pid is refused.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { expectNoHang, expectNoStackTrace, gpumem, started, stopAll, tempDir } from './harness.js';

const tmp = tempDir('gpumem-adv-kill-');
afterAll(() => {
  stopAll();
  tmp.remove();
});

const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** A process that holds no NVIDIA device: what an unrelated local pid looks like to kill. */
async function lookAlike(): Promise<number> {
  const c = spawn(process.execPath, ['-e', 'process.stdout.write("up\\n"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] });
  started.push(c);
  await new Promise((r) => c.stdout!.once('data', r));
  return c.pid!;
}

/** A zombie: a child of a shell that never reaps it (the shell execs into sleep). Returns [zombie, parent]. */
async function zombie(): Promise<[number, number]> {
  // The child outlives the exec, so the shell can never reap it; sleep does not reap children.
  const c = spawn('/bin/sh', ['-c', '/bin/sleep 0.3 & echo $!; exec /bin/sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
  started.push(c);
  const pid = Number(await new Promise<string>((r) => c.stdout!.once('data', (d: Buffer) => r(d.toString().trim()))));
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20));
  expect(readFileSync(`/proc/${pid}/stat`, 'utf8')).toMatch(/^\d+ \(.*\) Z/);
  return [pid, c.pid!];
}

function scenario(pids: number[]): Record<string, string> {
  const path = join(tmp.dir, `scenario-${pids.join('-')}.txt`);
  writeScenario(path, {
    driverVersion: '590.44.01', cudaVersion: 13010,
    devices: [fakeH100(0, { processes: pids.map((pid) => ({ pid, usedBytes: 2 * 1024 ** 3 })) }), fakeH100(1)],
  });
  return fakeNvmlEnv('590', path);
}

describe('gpumem kill, adversarial', () => {
  for (const prefix of ['/', '/dev/', '/proc/', tmp.dir + '/']) {
    it(`GPUMEM_DEVICE_PREFIX=${prefix === '/' || prefix.startsWith('/dev') || prefix.startsWith('/proc') ? prefix : '<private dir>/'} cannot make a process without a GPU device killable`, async () => {
      const pid = await lookAlike();
      const r = await gpumem(['kill', String(pid), '--yes', '--grace-ms', '100'], { env: { ...scenario([pid]), GPUMEM_DEVICE_PREFIX: prefix } });
      expectNoHang(r, 'kill');
      expectNoStackTrace(r, 'kill');
      expect(alive(pid)).toBe(true);
      expect(r.stdout).toMatch(new RegExp(`pid ${pid}: refused — cannot prove pid ${pid} is the GPU process`));
      expect(r.code).toBe(1);
    });
  }

  it('kill PID --yes exits 1 with the reason when every pid is refused', async () => {
    const r = await gpumem(['kill', '1', '--yes'], { env: scenario([1]) });
    expectNoStackTrace(r, 'kill 1');
    expect(r.stdout).toMatch(/pid 1: refused — pid 1 is never ended/);
    expect(r.code).toBe(1);
  });

  it('a zombie is refused with the real reason: it has exited and its parent must reap it', async () => {
    const [pid, parent] = await zombie();
    const r = await gpumem(['kill', String(pid), '--yes', '--json'], { env: scenario([pid]) });
    expectNoStackTrace(r, 'kill zombie');
    const doc = JSON.parse(r.stdout) as { rows: Array<{ pid: number; action: string; reason: string }> };
    expect(doc.rows).toEqual([expect.objectContaining({ pid, action: 'refuse', reason: expect.stringContaining(`a zombie: it has already exited`) })]);
    expect(doc.rows[0]!.reason).toContain(`parent (pid ${parent})`);
    expect(doc.rows[0]!.reason).not.toMatch(/container/);
    expect(r.code).toBe(1);
  });

  it('kill --gpu 9 on a 2-GPU machine: "no GPU 9", exit 2', async () => {
    const r = await gpumem(['kill', '--gpu', '9', '--yes'], { env: scenario([]) });
    expectNoStackTrace(r, 'kill --gpu 9');
    expect(r.stderr).toMatch(/error: no GPU 9 on this machine/);
    expect(r.stderr).toMatch(/its GPUs are 0, 1/);
    expect(r.code).toBe(2);
  });
});
