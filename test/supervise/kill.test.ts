import { spawn, type ChildProcess } from 'node:child_process';
import { realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endProcesses, executeKill, gpuProofReason, protectedPids, selectTargets, type KillCriteria } from '../../src/supervise/index.js';
import { readProcStat as readProcEntry } from '../../src/sources/index.js';
import { GiB, PROCS, alive, claimsSource, tempDir } from './helpers/claims.js';
import { startPump } from './helpers/pump.js';
import { BIN } from '../helpers/cli.js';

const children: ChildProcess[] = [];
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  cleanups.splice(0).forEach((f) => f());
});

/** Where the stand-in GPU processes open their "device nodes" (`${prefix}0` for GPU 0), as CUDA opens /dev/nvidia0. */
const devicePrefix = (claimsDir: string): string => join(realpathSync(claimsDir), 'nvidia');

async function holder(script: string, claimsDir: string, ...args: string[]): Promise<number> {
  return start(script, { GPUMEM_TEST_CLAIMS: claimsDir, GPUMEM_TEST_DEVICE_PREFIX: devicePrefix(claimsDir) }, args);
}

/** A process NVML lists (it claims memory) but that has no NVIDIA device open: a container's look-alike pid. */
async function lookAlike(script: string, claimsDir: string, ...args: string[]): Promise<number> {
  return start(script, { GPUMEM_TEST_CLAIMS: claimsDir, GPUMEM_TEST_DEVICE_PREFIX: '' }, args);
}

async function start(script: string, env: Record<string, string>, args: string[]): Promise<number> {
  const child = spawn(process.execPath, [join(PROCS, script), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child.pid as number;
}

const visibleHost = (pid: number) => ({ visible: true, uid: process.getuid!(), user: 'me', ppid: 1, cmdline: ['x'], exe: null, startTimeMs: 0, startTicks: readProcEntry(pid)!.startTicks, state: 'S' as const, containerId: null, nspid: null, cudaEnv: null, unavailable: {} });
const none: KillCriteria = { pids: [], gpus: [], orphans: false, zombieHolders: false, user: null, olderThanMs: null, idle: false };

describe('kill safety', () => {
  it('refuses a pid whose start time changed (pid reused) and leaves that process alone', async () => {
    const tmp = tempDir('gpumem-kill-');
    cleanups.push(tmp.remove);
    const pid = await holder('ignore-term.mjs', tmp.dir);
    const real = readProcEntry(pid)!.startTicks;
    const [result] = await endProcesses([{ pid, startTicks: real - 1 }], { graceMs: 100 });
    expect(result).toMatchObject({ pid, outcome: 'skipped' });
    expect(result?.detail).toMatch(/now belongs to another process/);
    expect(alive(pid)).toBe(true);
  });

  it('skips a pid that left the GPU between the table and the signal', async () => {
    const tmp = tempDir('gpumem-kill-');
    cleanups.push(tmp.remove);
    const source = claimsSource(tmp.dir, [{ totalBytes: 80 * GiB }]);
    const pid = await holder('ignore-term.mjs', tmp.dir, '--claim', `0:${GiB}`);
    const sample = await source.readSample();
    for (const p of sample.processes) p.host = visibleHost(p.pid);
    const options = { devicePrefix: devicePrefix(tmp.dir) };
    const rows = selectTargets(sample, { ...none, pids: [pid] }, { uid: process.getuid!(), protectedPids: protectedPids(process.pid), allUsers: false, nowMs: Date.now(), gpuProof: (p) => gpuProofReason(p, options) });
    expect(rows.map((r) => r.action)).toEqual(['end']);
    rmSync(join(tmp.dir, `${pid}-0`));
    const [out] = await executeKill(rows, source, 100, options);
    expect(out).toMatchObject({ pid, outcome: 'skipped', detail: "no longer in the driver's process list for that GPU" });
    expect(alive(pid)).toBe(true);
  });

  it('never selects pid 1, itself or an ancestor, nor another user\'s process without root', () => {
    const host = (uid: number) => ({ visible: true, uid, user: `u${uid}`, ppid: 0, cmdline: ['p'], exe: null, startTimeMs: 0, startTicks: 5, state: 'S' as const, containerId: null, nspid: null, cudaEnv: null, unavailable: {} });
    const proc = (pid: number, uid: number) => ({ pid, gpuUuid: 'GPU-a', gpuIndex: 0, gpuInstanceId: null, computeInstanceId: null, usedBytes: 1, kind: 'compute' as const, name: null, smUtilPct: 0, host: host(uid), unavailable: {} });
    const sample = { timeMs: 0, source: { kind: 'nvml' as const, detail: '' }, devices: [], processes: [proc(1, 1000), proc(50, 1000), proc(60, 1000), proc(70, 2000)], unavailable: {} };
    const caller = { uid: 1000, protectedPids: new Set([1, 50]), allUsers: false, nowMs: 0, gpuProof: () => null };
    const reasons = selectTargets(sample, { ...none, gpus: ['0'] }, caller).map((r) => [r.pid, r.action, r.reason]);
    expect(reasons).toEqual([
      [1, 'refuse', 'pid 1 is never ended'], [50, 'refuse', 'gpumem itself or one of its ancestors'], [60, 'end', 'matches'],
      [70, 'refuse', "belongs to u2000; you can only end your own processes"],
    ]);
    const asRoot = selectTargets(sample, { ...none, pids: [70] }, { ...caller, uid: 0 });
    expect(asRoot[0]?.reason).toMatch(/add --all-users/);
    expect(selectTargets(sample, { ...none, pids: [70] }, { ...caller, uid: 0, allUsers: true })[0]?.action).toBe('end');
  });

  it('refuses a pid NVML lists when the local process with that pid has no NVIDIA device open, and never signals it', async () => {
    const tmp = tempDir('gpumem-kill-');
    cleanups.push(tmp.remove);
    const source = claimsSource(tmp.dir, [{ totalBytes: 80 * GiB }]);
    // Same start time, same pid in the driver's list — the two checks a host-pid look-alike passes.
    const pid = await lookAlike('ignore-term.mjs', tmp.dir, '--claim', `0:${GiB}`);
    const sample = await source.readSample();
    for (const p of sample.processes) p.host = visibleHost(p.pid);
    const options = { devicePrefix: devicePrefix(tmp.dir) };
    const caller = { uid: process.getuid!(), protectedPids: protectedPids(process.pid), allUsers: false, nowMs: Date.now(), gpuProof: (p: number) => gpuProofReason(p, options) };
    const reason = `cannot prove pid ${pid} is the GPU process NVML reports: it has no NVIDIA device open here — in a container NVML shows host pids`;
    expect(selectTargets(sample, { ...none, pids: [pid] }, caller).map((r) => [r.action, r.reason])).toEqual([['refuse', reason]]);
    // Even a row that was selected (say the device was closed after the table) is re-checked before the signal.
    const forced = selectTargets(sample, { ...none, pids: [pid] }, { ...caller, gpuProof: () => null });
    expect(forced[0]?.action).toBe('end');
    const [out] = await executeKill(forced, source, 100, options);
    expect(out).toEqual({ pid, outcome: 'skipped', detail: reason });
    expect(alive(pid)).toBe(true);
  });

  it('ends a process that does hold its NVIDIA device open, as before', async () => {
    const tmp = tempDir('gpumem-kill-');
    cleanups.push(tmp.remove);
    const source = claimsSource(tmp.dir, [{ totalBytes: 80 * GiB }]);
    const pid = await holder('ignore-term.mjs', tmp.dir, '--claim', `0:${GiB}`);
    const sample = await source.readSample();
    for (const p of sample.processes) p.host = visibleHost(p.pid);
    const options = { devicePrefix: devicePrefix(tmp.dir) };
    expect(gpuProofReason(pid, options)).toBeNull();
    const rows = selectTargets(sample, { ...none, pids: [pid] }, { uid: process.getuid!(), protectedPids: protectedPids(process.pid), allUsers: false, nowMs: Date.now(), gpuProof: (p) => gpuProofReason(p, options) });
    expect(rows.map((r) => r.action)).toEqual(['end']);
    const [out] = await executeKill(rows, source, 100, options);
    expect(out).toMatchObject({ pid, outcome: 'killed' });
    expect(alive(pid)).toBe(false);
  });
});

describe('gpumem kill (CLI, fake NVML driver)', () => {
  it('shows the plan with --dry-run, then TERMs, KILLs the stubborn one and reports each pid; refuses its ancestors', async () => {
    const tmp = tempDir('gpumem-kill-cli-');
    const pump = startPump(tmp.dir);
    cleanups.push(() => pump.stop(), tmp.remove);
    const stubborn = await holder('ignore-term.mjs', tmp.dir, '--claim', `0:${GiB}`);
    const polite = await holder('worker-tree.mjs', tmp.dir, '--claim', `0:${2 * GiB}`, '--hold-ms', '60000');
    const impostor = await lookAlike('ignore-term.mjs', tmp.dir, '--claim', `0:${3 * GiB}`);
    // The test process itself "holds" memory: it is an ancestor of gpumem and must be refused.
    const { claim } = (await import(join(PROCS, 'claim.mjs'))) as { claim: (gpu: number, bytes: number) => void };
    process.env.GPUMEM_TEST_CLAIMS = tmp.dir;
    cleanups.push(() => delete process.env.GPUMEM_TEST_CLAIMS);
    claim(0, 5);
    const cli = (args: string[]) => new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const c = spawn(process.execPath, [BIN, 'kill', ...args], { env: { ...process.env, ...pump.env, GPUMEM_DEVICE_PREFIX: devicePrefix(tmp.dir) } });
      let stdout = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      c.on('close', (code) => resolve({ code, stdout }));
    });
    const dry = await cli(['--gpu', '0', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`${stubborn} +0 +1\\.00 GiB .*END`));
    expect(dry.stdout).toMatch(new RegExp(`${process.pid} .*SKIP +gpumem itself or one of its ancestors`));
    expect(dry.stdout).toMatch(new RegExp(`${impostor} .*SKIP +cannot prove pid ${impostor} is the GPU process`));
    expect(alive(stubborn) && alive(polite) && alive(impostor)).toBe(true);
    const noTty = await cli(['--gpu', '0']);
    expect(noTty.code).toBe(2);
    const done = await cli(['--gpu', '0', '--yes', '--grace-ms', '200', '--json']);
    const report = JSON.parse(done.stdout) as { outcomes: Array<{ pid: number; outcome: string }> };
    expect(report.outcomes).toEqual(expect.arrayContaining([
      expect.objectContaining({ pid: stubborn, outcome: 'killed' }), expect.objectContaining({ pid: polite, outcome: 'terminated' }),
      expect.objectContaining({ pid: process.pid, outcome: 'refused' }),
      expect.objectContaining({ pid: impostor, outcome: 'refused', detail: expect.stringMatching(/no NVIDIA device open here/) }),
    ]));
    expect(alive(stubborn) || alive(polite)).toBe(false);
    expect(alive(impostor)).toBe(true);
    expect(done.code).toBe(0);
  });
});
