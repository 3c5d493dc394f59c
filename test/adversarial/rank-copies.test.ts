/**
 * Two ranks of one live job on one GPU, started without a launcher in the tree (each under a shell of its own,
 * as a Slurm step daemon or a hand-written script starts them): real processes with RANK 0 / 1 and one
 * WORLD_SIZE, idle, on the fake NVML driver. diagnose and doctor must call them ranks sharing a GPU and offer
 * no `gpumem kill` of either; the same two processes without a rank environment are copies, and the idle
 * spare is offered — proof that the offer can happen.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GiB, MiB } from '../../src/core/units.js';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { expectNoHang, expectNoStackTrace, gpumem, tempDir } from './harness.js';

const shells: ChildProcess[] = [];
const tmps: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const s of shells.splice(0)) {
    try {
      process.kill(-s.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const t of tmps.splice(0)) t.remove();
});

/** The pid of the shell's one child, once it exists. */
async function childOf(shell: number): Promise<number> {
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    try {
      const kids = readFileSync(`/proc/${shell}/task/${shell}/children`, 'utf8').trim();
      if (kids) return Number(kids.split(' ')[0]);
    } catch {
      // Not there yet.
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`shell ${shell} started no child`);
}

/** Two idle sleepers with one command line, each under its own shell, both holding 1 GiB on GPU 0. */
async function twoOnGpu0(rankEnv: boolean): Promise<{ env: Record<string, string>; pids: number[] }> {
  const tmp = tempDir('gpumem-adv-ranks-');
  tmps.push(tmp);
  const pids: number[] = [];
  for (const rank of [0, 1]) {
    // "; true" keeps the shell as the parent instead of exec'ing the sleeper.
    const sh = spawn('/bin/sh', ['-c', 'python3 -c "import time; time.sleep(60)"; true'], {
      detached: true, stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '', ...(rankEnv ? { RANK: String(rank), LOCAL_RANK: String(rank), WORLD_SIZE: '2' } : {}) },
    });
    shells.push(sh);
    pids.push(await childOf(sh.pid!));
  }
  // Python's start-up uses the CPU: on a loaded machine it can still run into diagnose's window, and a copy that
  // ran is not idle. Both must have settled for the test to know which copies are idle.
  await new Promise((r) => setTimeout(r, 1500));
  const scenario = join(tmp.dir, 'scenario.txt');
  const processes = pids.map((pid) => ({ pid, usedBytes: 1 * GiB, smUtilPct: 0 }));
  writeScenario(scenario, {
    driverVersion: '590.48.01', cudaVersion: 13010,
    devices: [
      fakeH100(0, { memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: 2 * GiB }, utilization: { gpuPct: 0, memoryPct: 0 }, processes }),
      fakeH100(1),
    ],
  });
  return { env: { ...fakeNvmlEnv('590', scenario), NO_COLOR: '1', COLUMNS: '200' }, pids };
}

interface Doc { findings: Array<{ id: string; title: string; fix: string; command?: string }> }

describe('ranks of one job sharing a GPU, no launcher in the tree', () => {
  it('diagnose and doctor name them ranks and offer to end neither', async () => {
    const { env, pids } = await twoOnGpu0(true);
    const r = await gpumem(['diagnose', '--json', '--source', 'nvml', '--window', '1'], { env, timeoutMs: 30_000 });
    expectNoHang(r, 'diagnose');
    expectNoStackTrace(r, 'diagnose');
    const doc = JSON.parse(r.stdout) as Doc;
    const dup = doc.findings.filter((f) => f.id === 'duplicate-instances');
    expect(dup.map((f) => f.title)).toEqual(['2 ranks of one job (RANK 0, 1 of WORLD_SIZE 2) all run on GPU 0']);
    for (const f of doc.findings) for (const pid of pids) expect(`${f.command ?? ''} ${f.fix}`).not.toMatch(new RegExp(`gpumem kill [\\d ]*\\b${pid}\\b`));
    const d = await gpumem(['doctor', '--source', 'nvml', '--window', '1'], { env, timeoutMs: 30_000 });
    expectNoStackTrace(d, 'doctor');
    expect(d.stdout).not.toMatch(/copies of/);
    for (const pid of pids) expect(d.stdout).not.toMatch(new RegExp(`gpumem kill [\\d ]*\\b${pid}\\b`));
  }, 60_000);

  it('without a rank environment they are copies, and the idle spare is offered', async () => {
    const { env, pids } = await twoOnGpu0(false);
    const r = await gpumem(['diagnose', '--json', '--source', 'nvml', '--window', '1'], { env, timeoutMs: 30_000 });
    expectNoStackTrace(r, 'diagnose');
    const dup = (JSON.parse(r.stdout) as Doc).findings.find((f) => f.id === 'duplicate-instances');
    expect(dup?.title).toMatch(/^2 copies of/);
    expect(dup?.command).toBe(`gpumem kill ${Math.max(...pids)}`);
  }, 60_000);
});
