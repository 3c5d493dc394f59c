/**
 * TypeScript ↔ Python over the real channel: a Python process imports the fake torch (no code of ours in
 * the script), allocates, OOMs; the supervisor side must hold exactly the numbers the script measured.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { splitProcessMemory } from '../../../src/core/companion/index.js';
import { CompanionServer, companionPythonDir } from '../../../src/supervise/companion/index.js';

const PY = resolve(__dirname, '../../python');
const SCRIPT = join(PY, 'scripts', 'train_and_oom.py');

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('GPUMEM_')) env[k] = v;
  return env;
}

async function runChild(server: CompanionServer, version: string): Promise<{ pid: number; truth: Record<string, unknown>; stderr: string }> {
  const base = { ...cleanEnv(), PYTHONPATH: join(PY, 'fake_torch_versions', version), PYTHONDONTWRITEBYTECODE: '1' };
  const child = spawn('python3', [SCRIPT, '0.15'], { env: { ...base, ...server.env(base) } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  expect(code, stderr).toBe(0);
  const lines = stdout.trim().split('\n');
  return { pid: child.pid as number, truth: JSON.parse(lines[lines.length - 1] as string), stderr };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('companion channel', () => {
  it('collects the statistics, the OOM and its snapshot from a Python child', async () => {
    const runDir = mkdtempSync(join(tmpdir(), 'gpumem-run-'));
    dirs.push(runDir);
    const server = await CompanionServer.start({ rateHz: 50, snapshotDir: runDir });
    const { pid, truth, stderr } = await runChild(server, 'v2_11');
    await server.close();
    expect(stderr).toBe('');
    expect(existsSync(server.socketPath)).toBe(false);
    expect(server.problems).toEqual([]);

    const proc = server.state.get(pid);
    expect(proc?.hello?.torchVersion).toBe('2.11.0');
    expect(proc?.ended).toBe(true);
    const device = proc?.devices.get(0);
    expect(device?.gpuUuid).toBe('GPU-00000000-0000-0000-0000-000000000000');
    expect(device?.latest.allocatedBytes).toBe(truth.allocatedBytes);
    expect(device?.latest.reservedBytes).toBe(truth.reservedBytes);
    expect(device?.maxPeakAllocatedBytes).toBe(truth.peakAllocatedBytes);
    expect(device?.maxNumAllocRetries).toBe(truth.numAllocRetries);

    expect(proc?.ooms).toHaveLength(1);
    const oom = proc?.ooms[0];
    expect(oom?.source).toBe('observer');
    expect(oom?.requestedBytes).toBe(4 * 2 ** 30);
    expect(oom?.snapshotPath && existsSync(oom.snapshotPath)).toBe(true);
    expect(oom?.snapshotPath?.startsWith(runDir)).toBe(true);

    // The split with an NVML figure 500 MiB above PyTorch's reserved bytes: that 500 MiB is non-PyTorch.
    const reserved = device?.latest.reservedBytes as number;
    const split = splitProcessMemory(pid, device?.gpuUuid ?? null, reserved + 500 * 2 ** 20, device?.latest ?? null);
    expect(split.nonPytorchBytes).toBe(500 * 2 ** 20);
    expect(split.cachedBytes).toBe(reserved - (truth.allocatedBytes as number));
  });

  it('names the GPU from CUDA_VISIBLE_DEVICES when torch cannot (1.13) and sees the OOM from the counter', async () => {
    const server = await CompanionServer.start({ rateHz: 50, cudaVisibleDevices: 'GPU-4f1c2b7e-aaaa-bbbb-cccc-000000000002' });
    const { pid, truth } = await runChild(server, 'v1_13');
    await server.close();
    const proc = server.state.get(pid);
    expect(proc?.devices.get(0)?.gpuUuid).toBe('GPU-4f1c2b7e-aaaa-bbbb-cccc-000000000002');
    expect(proc?.devices.get(0)?.latest.reservedBytes).toBe(truth.reservedBytes);
    expect(proc?.ooms.map((o) => o.source)).toEqual(['counter']);
  });

  it('keeps the user PYTHONPATH after its own folder and ships the explicit API', async () => {
    const server = await CompanionServer.start();
    const env = server.env({ PYTHONPATH: '/opt/user/lib:/srv/x' });
    await server.close();
    const parts = (env.PYTHONPATH as string).split(':');
    expect(parts.slice(1)).toEqual(['/opt/user/lib', '/srv/x']);
    expect(existsSync(join(parts[0] as string, 'sitecustomize.py'))).toBe(true);
    expect(existsSync(join(companionPythonDir(), 'gpumem_torch', '__init__.py'))).toBe(true);
    expect(env.GPUMEM_COMPANION_CHANNEL).toBe(`unix:${server.socketPath}`);
    expect(env.GPUMEM_COMPANION_SNAPSHOT_DIR).toBeUndefined();
  });
});

describe('companion run plugin', () => {
  it('hands the env before spawn, splits on ticks, reports and closes after the attempt', async () => {
    const { companionPlugin } = await import('../../../src/supervise/companion/index.js');
    const plugin = companionPlugin({ rateHz: 50 });
    const base = { ...cleanEnv(), PYTHONPATH: join(PY, 'fake_torch_versions', 'v2_4'), CUDA_VISIBLE_DEVICES: 'GPU-x' };
    const added = (await plugin.beforeSpawn?.({ attempt: 1, batch: null, env: base })) as Record<string, string>;
    const child = spawn('python3', [SCRIPT, '0.1'], { env: { ...base, ...added } });
    await new Promise((r) => child.on('close', r));
    // The child has exited; its last lines may still be on their way through the socket.
    for (let i = 0; i < 200 && !plugin.state().get(child.pid as number)?.ended; i++) await new Promise((r) => setTimeout(r, 10));
    const device = plugin.state().get(child.pid as number)?.devices.get(0);
    const reserved = device?.latest.reservedBytes as number;
    const proc = {
      pid: child.pid as number, gpuUuid: 'GPU-00000000-0000-0000-0000-000000000000', gpuIndex: 0, gpuInstanceId: null,
      computeInstanceId: null, usedBytes: reserved + 300 * 2 ** 20, kind: 'compute' as const, name: null, smUtilPct: null,
      host: null, unavailable: {},
    };
    plugin.onTick?.({ tMs: 0, sample: {} as never, treeBytes: {}, treeProcesses: [proc] }, { attempt: 1, batch: null, env: base });
    expect(plugin.latestSplit()?.gpus[0]?.nonPytorchBytes).toBe(300 * 2 ** 20);
    const report = (await plugin.afterAttempt?.({ attempt: 1, batch: null, env: base, exit: {} as never })) as {
      schemaVersion: number; processes: Array<{ pid: number; ooms: unknown[] }>; lastSplit: unknown; splitTimeline: unknown;
    };
    expect(report.schemaVersion).toBe(1);
    expect(report.splitTimeline).toEqual([{ tMs: 0, allocatedBytes: { [proc.gpuUuid]: device?.latest.allocatedBytes }, reservedBytes: { [proc.gpuUuid]: reserved } }]);
    expect(report.processes.map((p) => [p.pid, p.ooms.length])).toEqual([[child.pid, 1]]);
    expect(existsSync(added.GPUMEM_COMPANION_CHANNEL?.slice(5) as string)).toBe(false);
  });
});
