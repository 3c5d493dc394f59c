/**
 * `gpumem diagnose` on real process trees the test spawns (a trainer with fork workers, two copies of one
 * script, a process named like a Jupyter kernel, an orphan re-parented by the system, a zombie whose parent
 * never reaps it), mapped to GPU memory and utilization by the fake libnvidia-ml.so.1, with /proc read for real.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectPidNamespace } from '../../src/orchestrate/index.js';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { GiB, MiB } from '../../src/core/units.js';
import { BIN } from '../helpers/cli.js';

const PROCS = fileURLToPath(new URL('./diagnose-procs/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-diagnose-'));
const scenario = join(dir, 'scenario.txt');
const started: ChildProcess[] = [];
const extraPids: number[] = [];
// A valid pid that does not exist here: a host pid seen from a container, or one that has exited.
const MISSING_PID = [4_194_001, 4_193_001, 4_190_001, 3_999_001].find((p) => !existsSync(`/proc/${p}`))!;

function python(script: string, args: string[] = [], env: Record<string, string> = {}): ChildProcess {
  const child = spawn('python3', [join(PROCS, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { PATH: process.env.PATH ?? '', ...env } });
  started.push(child);
  return child;
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('\n')) resolve(text.split('\n')[0]!.trim());
    });
    child.on('exit', () => (text.includes('\n') ? undefined : reject(new Error(`${child.spawnargs.join(' ')} exited early`))));
  });
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cmdlineHas = (pid: number, text: string): boolean => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
  } catch {
    return false;
  }
};
const stateOf = (pid: number): string | null => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[0] ?? null;
  } catch {
    return null;
  }
};

const pids = { trainer: 0, workers: [] as number[], copies: [] as number[], kernel: 0, orphan: 0, zombie: 0 };
let doc: {
  findings: Array<{ id: string; evidence: { pids: number[]; gpuIndexes: number[]; bytes: number | null } }>;
  accounting: Array<{ usedBytes: number; visibleBytes: number; notVisibleBytes: number; residualBytes: number }>;
  processes: Array<{ pid: number; role: string; contextOnly: boolean; util: { idleWholeWindow: boolean } | null; state: string }>;
  window: { samples: number; spanMs: number };
};
let exitCode: number | null = null;

beforeAll(async () => {
  const trainer = python('train.py', [], { CUDA_VISIBLE_DEVICES: '1' });
  pids.trainer = trainer.pid!;
  pids.workers = (await firstLine(trainer)).split(' ').map(Number);
  const copies = [python('finetune.py', ['--lr', '1e-4']), python('finetune.py', ['--lr', '1e-4'])];
  pids.copies = copies.map((c) => c.pid!);
  const kernel = python('ipykernel_launcher.py', ['-f', '/tmp/kernel-1.json']);
  pids.kernel = kernel.pid!;
  const orphanParent = python('orphan.py');
  pids.orphan = Number(await firstLine(orphanParent));
  extraPids.push(pids.orphan);
  const zombieParent = python('zombie.py');
  pids.zombie = Number(await firstLine(zombieParent));
  await until(() => [...pids.copies, pids.kernel].every((p) => cmdlineHas(p, '.py')), 'python to start');
  await until(() => stateOf(pids.zombie) === 'Z', 'the zombie');
  await until(() => orphanParent.exitCode !== null, 'the orphan\'s parent to exit');

  const used0 = 20 * GiB + 2 * 500 * MiB + 2 * 3 * GiB;
  const used1 = 3 * GiB + GiB + 700 * MiB + 2 * GiB + 300 * MiB;
  writeScenario(scenario, {
    driverVersion: '590.48.01',
    cudaVersion: 13010,
    devices: [
      fakeH100(0, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: used0 },
        utilization: { gpuPct: 60, memoryPct: 20 },
        processes: [
          { pid: pids.trainer, usedBytes: 20 * GiB, smUtilPct: 55 },
          ...pids.workers.map((pid) => ({ pid, usedBytes: 500 * MiB, smUtilPct: 0 })),
          ...pids.copies.map((pid) => ({ pid, usedBytes: 3 * GiB, smUtilPct: 20 })),
        ],
      }),
      fakeH100(1, {
        memory: { totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, usedBytes: used1 },
        processes: [
          { pid: pids.kernel, usedBytes: 3 * GiB, smUtilPct: 0 },
          { pid: pids.orphan, usedBytes: GiB, smUtilPct: 0 },
          { pid: pids.zombie, usedBytes: 700 * MiB, smUtilPct: 0 },
          { pid: MISSING_PID, usedBytes: 2 * GiB },
        ],
      }),
    ],
  });
  const r = spawnSync(process.execPath, [BIN, 'diagnose', '--window', '1', '--json', '--source', 'nvml'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...fakeNvmlEnv('590', scenario) },
    timeout: 30_000,
  });
  expect(r.stderr).toBe('');
  exitCode = r.status;
  doc = JSON.parse(r.stdout);
}, 30_000);

afterAll(() => {
  for (const pid of [...pids.workers, ...extraPids]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const child of started) child.kill('SIGKILL');
});

const finding = (id: string) => doc.findings.filter((f) => f.id === id);

describe('gpumem diagnose on real process trees and the fake NVML', () => {
  it('exits 1 with findings, and the accounting sums exactly', () => {
    expect(exitCode).toBe(1);
    // --window 1 at one sample per 500 ms: three live samples.
    expect(doc.window.samples).toBe(3);
    expect(doc.window.spanMs).toBeGreaterThan(500);
    expect(doc.accounting[0]).toMatchObject({ visibleBytes: 26 * GiB + 1000 * MiB, notVisibleBytes: 0, residualBytes: 0 });
    expect(doc.accounting[1]).toMatchObject({ visibleBytes: 4 * GiB + 700 * MiB, notVisibleBytes: 2 * GiB, residualBytes: 300 * MiB });
    for (const a of doc.accounting) expect(a.visibleBytes + a.notVisibleBytes + a.residualBytes).toBe(a.usedBytes);
  });

  it('finds the trainer\'s fork workers holding CUDA contexts', () => {
    expect(finding('worker-cuda').map((f) => f.evidence)).toEqual([expect.objectContaining({ pids: [...pids.workers].sort((a, b) => a - b), bytes: 1000 * MiB })]);
    const roles = doc.processes.filter((p) => pids.workers.includes(p.pid)).map((p) => [p.role, p.contextOnly]);
    expect(roles).toEqual([['worker', true], ['worker', true]]);
  });

  it('finds two copies of one script on GPU 0, and the trainer outside its CUDA_VISIBLE_DEVICES', () => {
    expect(finding('duplicate-instances').map((f) => f.evidence)).toEqual([expect.objectContaining({ pids: [...pids.copies].sort((a, b) => a - b), gpuIndexes: [0], bytes: 6 * GiB })]);
    // The workers inherited the trainer's environment: one finding for the tree.
    const tree = [pids.trainer, ...pids.workers].sort((a, b) => a - b);
    expect(finding('wrong-gpu').map((f) => f.evidence)).toEqual([expect.objectContaining({ pids: tree, gpuIndexes: [0], bytes: 20 * GiB + 1000 * MiB })]);
  });

  it('finds the idle kernel, the orphan and the zombie', () => {
    expect(finding('idle-kernel')[0]?.evidence).toMatchObject({ pids: [pids.kernel], bytes: 3 * GiB });
    expect(doc.processes.find((p) => p.pid === pids.kernel)?.util?.idleWholeWindow).toBe(true);
    expect(finding('orphans')[0]?.evidence).toMatchObject({ pids: [pids.orphan], bytes: GiB });
    expect(finding('zombies')[0]?.evidence).toMatchObject({ pids: [pids.zombie], bytes: 700 * MiB });
    expect(doc.processes.find((p) => p.pid === pids.zombie)?.state).toBe('Z');
  });

  it('reports the missing pid as hidden inside a container, as gone on a host, and the residual', () => {
    const expected = detectPidNamespace() === 'container' ? 'hidden-processes' : 'stale-pids';
    expect(finding(expected)[0]?.evidence).toMatchObject({ pids: [MISSING_PID], bytes: 2 * GiB });
    expect(finding(expected === 'stale-pids' ? 'hidden-processes' : 'stale-pids')).toEqual([]);
    expect(finding('unattributed')[0]?.evidence).toMatchObject({ gpuIndexes: [1], bytes: 300 * MiB });
  });

  it('stays quiet where nothing is wrong: no near-capacity, no low utilization, no other users', () => {
    expect([...finding('near-capacity'), ...finding('low-utilization'), ...finding('other-users')]).toEqual([]);
  });
});
