/**
 * `gpumem doctor` and `gpumem diagnose` end to end: on the synthetic two-H100 recording (every kind of process the
 * rules tell apart, with exact bytes), on the bundled example (a real H100 recording) and without any GPU access.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gpumemInProcess, type CliResult } from '../helpers/cli.js';
import { EXAMPLE_PROCESSES, EXAMPLE_RESIDUAL_BYTES, exampleRecordingText } from '../../scripts/make-example-recording.js';
import { MiB } from '../../src/core/units.js';
import { describeExample } from '../../src/cli/commands/doctor.js';
import { collectWindow } from '../../src/orchestrate/index.js';

/** What scripts/make-example-recording.ts writes: a torchrun job on 2 GPUs, workers, a notebook, an orphan, a vanished pid. */
const SYNTHETIC = fileURLToPath(new URL('../fixtures/recordings/synthetic-two-h100.ndjson', import.meta.url));
/** The bundled example: recorded on an H100 80GB (bench/gpu/trainer_with_workers.py, trainer 2122, workers 2305 and 2306). */
const EXAMPLE = fileURLToPath(new URL('../../examples/doctor-example.ndjson', import.meta.url));
const RECORDED = fileURLToPath(new URL('../../bench/results/2026-11-27-h100-80gb/part1-companion-snapshot-record/record/doctor-recording.ndjson', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-doctor-'));
// No NVML library and no nvidia-smi: the machine has no NVIDIA driver.
const NO_GPU = { PATH: '/nonexistent', GPUMEM_NVML_LIB: join(dir, 'absent-libnvidia-ml.so.1'), GPUMEM_NVIDIA_SMI: join(dir, 'absent-nvidia-smi') };

const gpumem = (args: string[]): Promise<CliResult> => gpumemInProcess(args, { env: NO_GPU });

type Doc = {
  schemaVersion: number;
  fallback: { reason: string; recording: string } | null;
  accounting: Array<{ gpuIndex: number; usedBytes: number; visibleBytes: number; notVisibleBytes: number; residualBytes: number; reservedBytes: number; freeBytes: number }>;
  findings: Array<{ id: string; severity: string; evidence: { pids: number[]; gpuIndexes: number[]; bytes: number | null; details?: Record<string, unknown> } }>;
  trees: Array<{ rootPid: number; launcher: boolean; pids: number[]; totalBytes: number }>;
};

const bytesOf = (pids: number[]): number => EXAMPLE_PROCESSES.filter((p) => pids.includes(p.pid)).reduce((s, p) => s + p.usedMiB * MiB, 0);

describe('the synthetic two-H100 recording', () => {
  it('is what scripts/make-example-recording.ts writes, and says it is synthetic', async () => {
    const text = readFileSync(SYNTHETIC, 'utf8');
    expect(text).toBe(exampleRecordingText());
    expect(JSON.parse(text.split('\n')[0]!).note).toMatch(/^SYNTHETIC/);
  });

  it('diagnose --json finds exactly the planted problems, with exact bytes', async () => {
    const r = await gpumem(['diagnose', '--replay', SYNTHETIC, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.schemaVersion).toBe(1);
    expect(doc.fallback).toBeNull();
    const byId = (id: string) => doc.findings.filter((f) => f.id === id);
    expect(doc.findings.map((f) => f.id).sort()).toEqual(
      ['alloc-conf', 'idle-kernel', 'near-capacity', 'orphans', 'other-users', 'stale-pids', 'unattributed', 'worker-cuda', 'worker-cuda'].sort(),
    );
    const workers = byId('worker-cuda').map((f) => [f.evidence.pids, f.evidence.bytes]);
    expect(workers).toEqual([[[41230, 41231], bytesOf([41230, 41231])], [[41232, 41233], bytesOf([41232, 41233])]]);
    expect(byId('orphans')[0]!.evidence).toMatchObject({ pids: [36104], bytes: 6144 * MiB });
    expect(byId('stale-pids')[0]!.evidence).toMatchObject({ pids: [35990], bytes: 2048 * MiB });
    expect(byId('idle-kernel')[0]!.evidence).toMatchObject({ pids: [38877], bytes: 9728 * MiB });
    expect(byId('other-users')[0]!.evidence).toMatchObject({ pids: [38877], gpuIndexes: [1], bytes: 9728 * MiB });
    expect(byId('unattributed')[0]!.evidence).toMatchObject({ gpuIndexes: [0], bytes: EXAMPLE_RESIDUAL_BYTES[0] });
    const gpu1 = doc.accounting[1]!;
    expect(byId('near-capacity')[0]!.evidence).toMatchObject({ gpuIndexes: [1], bytes: gpu1.freeBytes });
    expect(gpu1.freeBytes).toBe(81559 * MiB - 479 * MiB - gpu1.usedBytes);
    expect(byId('alloc-conf')[0]!.evidence.pids).toEqual([36104, 41210, 41211]);
  });

  it('diagnose --json accounts for every byte of both GPUs exactly', async () => {
    const doc = JSON.parse((await gpumem(['diagnose', '--replay', SYNTHETIC, '--json'])).stdout) as Doc;
    for (const acc of doc.accounting) {
      const visible = EXAMPLE_PROCESSES.filter((p) => p.gpu === acc.gpuIndex && p.goneFrom === undefined);
      const gone = EXAMPLE_PROCESSES.filter((p) => p.gpu === acc.gpuIndex && p.goneFrom !== undefined);
      expect(acc.visibleBytes).toBe(bytesOf(visible.map((p) => p.pid)));
      expect(acc.notVisibleBytes).toBe(bytesOf(gone.map((p) => p.pid)));
      expect(acc.residualBytes).toBe(EXAMPLE_RESIDUAL_BYTES[acc.gpuIndex]);
      expect(acc.visibleBytes + acc.notVisibleBytes + acc.residualBytes).toBe(acc.usedBytes);
      expect(acc.reservedBytes).toBe(479 * MiB);
    }
    const launcher = doc.trees.find((t) => t.rootPid === 41200)!;
    expect(launcher.launcher).toBe(true);
    expect(launcher.pids.sort()).toEqual([41210, 41211, 41230, 41231, 41232, 41233]);
    expect(launcher.totalBytes).toBe(bytesOf(launcher.pids));
  });

  it('the human diagnose report prints the accounting and every finding with evidence', async () => {
    const r = await gpumem(['diagnose', '--replay', SYNTHETIC]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/unattributed\s+1\.50 GiB/);
    expect(r.stdout).toMatch(/= used\s+64\.50 GiB/);
    expect(r.stdout).toContain('launcher pid 41200');
    expect(r.stdout).toContain('WARNING  idle notebook kernel pid 38877 (bob) holds 9.50 GiB on GPU 1');
    expect(r.stdout.match(/evidence: /g)).toHaveLength(9);
  });
});

/** The samples of a recording file (its other lines are the header and host facts). */
const samplesOf = (path: string): Array<{ timeMs: number; devices: Array<{ name: string }>; processes: Array<{ pid: number; usedBytes: number }> }> =>
  readFileSync(path, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l)).filter((x) => 'timeMs' in x);

describe('the bundled example recording', () => {
  it('is the real H100 recording from bench/results, byte for byte, and its first line says where and when', () => {
    expect(readFileSync(EXAMPLE).equals(readFileSync(RECORDED))).toBe(true);
    const header = JSON.parse(readFileSync(EXAMPLE, 'utf8').split('\n')[0]!);
    expect(header.note).toMatch(/^Recorded on a real NVIDIA H100 80GB HBM3 \(driver 580\.159\.04\)/);
    expect(header.note).not.toMatch(/synthetic/i);
    expect(new Date(header.createdMs).toISOString()).toBe('2026-11-27T13:33:17.940Z');
    const samples = samplesOf(EXAMPLE);
    expect(samples).toHaveLength(40);
    expect(new Set(samples.flatMap((x) => x.devices.map((d) => d.name)))).toEqual(new Set(['NVIDIA H100 80GB HBM3']));
  });

  it('diagnose --json finds the workers of trainer 2122 that touched CUDA, with their exact bytes', async () => {
    const r = await gpumem(['diagnose', '--replay', EXAMPLE, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as Doc;
    expect(doc.fallback).toBeNull();
    expect(doc.findings.map((f) => f.id).sort()).toEqual(['alloc-conf', 'low-utilization', 'worker-cuda']);
    const workers = doc.findings.find((f) => f.id === 'worker-cuda')!.evidence;
    expect(workers.pids).toEqual([2305, 2306]);
    expect(workers.details?.parentPid).toBe(2122);
    const latest = samplesOf(EXAMPLE).at(-1)!.processes;
    expect(workers.bytes).toBe(latest.filter((p) => p.pid === 2305 || p.pid === 2306).reduce((sum, p) => sum + p.usedBytes, 0));
    expect(workers.bytes).toBe(2 * 612 * MiB);
    const gpu0 = doc.accounting[0]!;
    expect(gpu0.visibleBytes + gpu0.notVisibleBytes + gpu0.residualBytes).toBe(gpu0.usedBytes);
  });
});

describe('what doctor calls the example in its first line', () => {
  const collect = (path: string) => collectWindow({ windowMs: 0, intervalMs: 500, source: { replay: path, env: {} } });
  /** A copy of the synthetic recording with another note and, optionally, GPU 1 renamed. */
  const retitled = (name: string, note: string, gpu1Name?: string): string => {
    const [header, ...rest] = readFileSync(SYNTHETIC, 'utf8').trim().split('\n');
    const samples = rest.map((l) => {
      const x = JSON.parse(l);
      if (gpu1Name !== undefined) x.devices[1].name = gpu1Name;
      return JSON.stringify(x);
    });
    const file = join(dir, name);
    writeFileSync(file, [JSON.stringify({ ...JSON.parse(header!), note }), ...samples].join('\n') + '\n');
    return file;
  };

  it('the real recording: the GPU it was recorded on and the day (UTC)', async () => {
    expect(describeExample(await collect(EXAMPLE))).toBe('recorded on an NVIDIA H100 80GB HBM3 on 2026-11-27');
  });

  it('a synthetic note: "synthetic", whatever its GPUs', async () => {
    expect(describeExample(await collect(SYNTHETIC))).toBe('synthetic');
  });

  it('several GPUs are counted by name, and a name is printed escaped', async () => {
    const same = retitled('two.ndjson', 'measured on node 7');
    expect(describeExample(await collect(same))).toBe('recorded on 2× NVIDIA H100 80GB HBM3 on 2026-07-14');
    const hostile = retitled('hostile.ndjson', 'measured', 'Tesla\u001b[2J T4');
    expect(describeExample(await collect(hostile))).toBe('recorded on an NVIDIA H100 80GB HBM3 and a Tesla\\e[2J T4 on 2026-07-14');
  });
});

describe('gpumem doctor', () => {
  it('without any GPU access shows the bundled example and says in its first line what it is', async () => {
    const r = await gpumem([]);
    expect(r.stderr).toBe('');
    // The example's findings are warnings and notes: nothing critical, so doctor exits 0.
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('No GPU access on this machine: showing the bundled example recording (examples/doctor-example.ndjson, recorded on an NVIDIA H100 80GB HBM3 on 2026-11-27), not your GPUs.');
    expect(lines[1]).toMatch(/^why: no GPU access: /);
    expect(r.stdout).toContain('[0] NVIDIA H100 80GB HBM3');
    expect(r.stdout).not.toContain('[1] ');
    expect(r.stdout).toContain('Findings (3):');
    expect(r.stdout).toMatch(/^WARNING +2 workers of pid 2122 hold 1\.20 GiB/m);
    for (const pid of [2122, 2305, 2306]) expect(r.stdout).toMatch(new RegExp(`^ +${pid} +root `, 'm'));
  });

  it('doctor --json without GPU access exits 3 and prints no document: the example is for the screen only', async () => {
    const r = await gpumem(['doctor', '--json']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^gpumem: error: no GPU access/);
  });

  it('diagnose without GPU access exits 3 instead of showing the example', async () => {
    const r = await gpumem(['diagnose']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^gpumem: error: no GPU access/);
  });

  it('exits 0 on a recording where nothing is wrong', async () => {
    const lines = readFileSync(SYNTHETIC, 'utf8').trim().split('\n');
    const header = JSON.parse(lines[0]!);
    const quiet = lines.slice(1).map((l) => {
      const s = JSON.parse(l);
      s.processes = [];
      for (const d of s.devices) {
        d.memory.usedBytes = 4 * MiB;
        d.memory.freeBytes = d.memory.totalBytes - d.memory.reservedBytes - 4 * MiB;
      }
      return JSON.stringify(s);
    });
    const file = join(dir, 'quiet.ndjson');
    writeFileSync(file, [JSON.stringify(header), ...quiet].join('\n') + '\n');
    const r = await gpumem(['doctor', '--replay', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No findings');
  });

  it('exits 0 when the findings are only warnings and notes, 1 with --exit-code; diagnose exits 1', async () => {
    const [doctor, strict, diagnose] = await Promise.all([
      gpumem(['doctor', '--replay', EXAMPLE]),
      gpumem(['doctor', '--replay', EXAMPLE, '--exit-code']),
      gpumem(['diagnose', '--replay', EXAMPLE]),
    ]);
    expect(doctor.stdout).toContain('Findings (3):');
    expect(doctor.stdout).not.toMatch(/^CRITICAL/m);
    expect(doctor.code, doctor.stderr).toBe(0);
    expect(strict.stdout).toBe(doctor.stdout);
    expect(strict.code).toBe(1);
    expect(diagnose.code).toBe(1);
  });

  it('exits 1 when a finding is critical (a GPU at 95 % during training)', async () => {
    const lines = readFileSync(SYNTHETIC, 'utf8').trim().split('\n');
    // 2 GiB more on GPU 1, held by nobody visible: 73.51 + 2 + 0.47 of 79.65 GiB is over 95 %.
    const fuller = lines.slice(1).map((l) => {
      const s = JSON.parse(l);
      for (const d of s.devices ?? []) {
        if (d.index !== 1 || !d.memory) continue;
        d.memory.usedBytes += 2048 * MiB;
        d.memory.freeBytes -= 2048 * MiB;
      }
      return JSON.stringify(s);
    });
    const file = join(dir, 'critical.ndjson');
    writeFileSync(file, [lines[0], ...fuller].join('\n') + '\n');
    const r = await gpumem(['doctor', '--replay', file]);
    expect(r.stdout).toMatch(/^CRITICAL +GPU 1 is 9[5-9]% full during training/m);
    expect(r.code, r.stderr).toBe(1);
  });

  it('refuses a bad --window and a broken recording with one clear error', async () => {
    const bad = await gpumem(['doctor', '--window', '-1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--window/);
    const file = join(dir, 'broken.ndjson');
    writeFileSync(file, '{"format":"gpumem-recording","version":1,"createdMs":1}\n{"timeMs": "x"}\n{}\n');
    const broken = await gpumem(['diagnose', '--replay', file]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/broken\.ndjson:2: /);
    expect(broken.stderr).not.toMatch(/at .*\.js/);
  });
});
