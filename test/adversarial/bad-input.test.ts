/**
 * Bad input everywhere, through the built CLI: devices and FIFOs where files are expected, numbers that are
 * not whole bytes, inputs large enough to overflow argument spreads, a companion flooding OOM reports, names
 * that collide with Object.prototype. Each must end promptly with one clear line (or a correct report), never
 * a hang, a stack trace or unbounded memory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { expectNoHang, expectNoStackTrace, gpumem, tempDir } from './harness.js';

/** Two GPUs and a version 1 layout (every line after the header a whole sample), which bigRecording copies from. */
const SYNTHETIC = fileURLToPath(new URL('../fixtures/recordings/synthetic-two-h100.ndjson', import.meta.url));
const PROCS = fileURLToPath(new URL('../fixtures/procs/', import.meta.url));
const tmp = tempDir('gpumem-adv-input-');
afterAll(tmp.remove);
const fifo = join(tmp.dir, 'fifo');
spawnSync('mkfifo', [fifo]);

const MiB = 1024 * 1024;

function expectClean(r: Awaited<ReturnType<typeof gpumem>>, what: string, maxRssBytes = 400 * MiB): void {
  expectNoHang(r, what);
  expectNoStackTrace(r, what);
  expect(r.peakRssBytes, `${what}: peak memory`).toBeLessThan(maxRssBytes);
}

/** A recording of one sample with `count` copies of the synthetic recording's first process, all on GPU `gpu`. */
function bigRecording(count: number, gpu: number | 'alternate', samples = 1): string {
  const [header, first] = readFileSync(SYNTHETIC, 'utf8').split('\n') as [string, string];
  const sample = JSON.parse(first) as { timeMs: number; devices: Array<{ uuid: string }>; processes: Array<Record<string, unknown> & { host: Record<string, unknown> }> };
  const template = sample.processes[0]!;
  sample.processes = Array.from({ length: count }, (_, i) => {
    const g = gpu === 'alternate' ? i % 2 : gpu;
    return { ...template, pid: 100_000 + i, usedBytes: MiB, gpuIndex: g, gpuUuid: sample.devices[g]!.uuid, host: { ...template.host, ppid: i % 3 === 0 ? 1 : 100_000 + Math.floor(i / 2), nspid: [100_000 + i] } };
  });
  const path = join(tmp.dir, `rec-${count}-${gpu}-${samples}.ndjson`);
  const lines = [header];
  for (let k = 0; k < samples; k++) lines.push(JSON.stringify({ ...sample, timeMs: sample.timeMs + 500 * k }));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('file types are checked before reading', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['pipeline on /dev/zero', ['pipeline', '/dev/zero', '--check'], /\/dev\/zero is a device, not a pipeline file/],
    ['--replay /dev/zero', ['status', '--replay', '/dev/zero'], /\/dev\/zero is a device, not a recording/],
    ['snapshot on a FIFO', ['snapshot', fifo], /is a FIFO, not a snapshot file/],
    ['snapshot on /dev/zero', ['snapshot', '/dev/zero'], /\/dev\/zero is a device, not a snapshot/],
    ['explain on /dev/zero', ['explain', '/dev/zero'], /\/dev\/zero is a device, not a log file/],
    ['estimate on a FIFO', ['estimate', fifo, '--batch', '1'], /is a FIFO, not a safetensors file/],
    ['pipeline on a FIFO with no writer', ['pipeline', fifo, '--check'], /pipeline/],
    ['--replay on a FIFO with no writer', ['status', '--replay', fifo], /recording/],
    ['explain --follow on a FIFO', ['explain', '--follow', fifo], /--follow watches a growing regular file/],
  ];
  for (const [name, args, message] of cases) {
    it(`${name}: one clear error, exit 2`, async () => {
      const r = await gpumem(args, { timeoutMs: 10_000 });
      expectClean(r, name);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/^hint: /m);
      expect(r.code).toBe(2);
    });
  }

  it('explain on a FIFO with no writer ends after a short wait for one; with a writer it streams what is written', async () => {
    const empty = await gpumem(['explain', fifo], { timeoutMs: 10_000 });
    expectClean(empty, 'explain on an idle FIFO');
    expect(empty.stdout).toMatch(/No out-of-memory error found/);
    const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.20 GiB is free.\n';
    // The writer comes half a second after gpumem opened the FIFO and sends its text in pieces.
    const reading = gpumem(['explain', fifo], { timeoutMs: 15_000 });
    const writer = spawn('/bin/sh', ['-c', `sleep 0.5; { printf 'step 1\\n'; sleep 0.3; printf '%s' '${oom}'; } > '${fifo}'`]);
    const r = await reading;
    writer.kill();
    expectClean(r, 'explain on a FIFO with a writer');
    expect(r.stdout).toMatch(/OOM 1\/1/);
  });

  it('explain - stays streaming (stdin)', async () => {
    const r = await gpumem(['explain', '-'], { input: 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n' });
    expectClean(r, 'explain -');
    expect(r.stdout).toMatch(/OOM 1\/1/);
  });
});

describe('numbers and sizes from files', () => {
  for (const value of ['1.5', '1e400', '-1']) {
    it(`snapshot with total_size ${value}: one clear error`, async () => {
      const path = join(tmp.dir, `snap-${value}.json`);
      writeFileSync(path, `{"segments":[{"device":0,"address":0,"total_size":${value},"stream":0,"segment_type":"large","blocks":[{"size":1024,"state":"active_allocated","address":0}]}]}`);
      const r = await gpumem(['snapshot', path]);
      expectClean(r, `snapshot total_size ${value}`);
      expect(r.stderr).toMatch(/segment 0: total_size is .*, not a whole number of bytes/);
      expect(r.code).toBe(2);
    });
  }

  it('a tensor named constructor (and __proto__) in a safetensors header counts as a name', async () => {
    const header = JSON.stringify({ constructor: { dtype: 'F32', shape: [4], data_offsets: [0, 16] }, __proto__x: { dtype: 'F32', shape: [2], data_offsets: [16, 24] }, toString: { dtype: 'F16', shape: [2], data_offsets: [24, 28] } });
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(BigInt(Buffer.byteLength(header)));
    const file = join(tmp.dir, 'proto.safetensors');
    writeFileSync(file, Buffer.concat([size, Buffer.from(header), Buffer.alloc(28)]));
    const r = await gpumem(['estimate', file, '--batch', '1']);
    expectClean(r, 'estimate with prototype names');
    expect(r.stdout).not.toMatch(/function|native code|\[object/);
    expect(r.stdout).toMatch(/constructor 4/);
    expect(r.stdout).toMatch(/toString 2/);
  });
});

describe('huge inputs', () => {
  it('status on a recording with 200,000 processes on one GPU: no stack overflow', async () => {
    const rec = bigRecording(200_000, 0);
    const r = await gpumem(['status', '--replay', rec], { timeoutMs: 60_000, maxOutputChars: 64_000_000 });
    expectClean(r, 'status, 200,000 processes', 1500 * MiB);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').filter((l) => /^\s+\d{6} /.test(l))).toHaveLength(200_000);
  }, 70_000);

  it('doctor on 20,000 processes finishes (linear analysis; see bench/diagnose-scale)', async () => {
    const rec = bigRecording(20_000, 'alternate', 3);
    const r = await gpumem(['doctor', '--replay', rec], { timeoutMs: 60_000 });
    expectClean(r, 'doctor, 20,000 processes', 1000 * MiB);
    expect(r.stdout).toMatch(/^gpumem doctor: 3 samples/m);
  }, 70_000);

  it('a companion flooding 226,000 OOM reports: memory stays bounded, the report prints and counts them', async () => {
    const scenario = join(tmp.dir, 'flood-scenario.txt');
    writeScenario(scenario, { driverVersion: '590.44.01', cudaVersion: 13010, devices: [fakeH100(0)] });
    const r = await gpumem(['run', '--json', '--interval-ms', '50', '--no-history', '--', process.execPath, join(PROCS, 'companion-flood.mjs'), '226000'], {
      env: { ...fakeNvmlEnv('590', scenario), XDG_RUNTIME_DIR: tmp.dir }, timeoutMs: 90_000,
    });
    expectClean(r, 'companion flood', 600 * MiB);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { attempts: Array<{ plugins: { companion: { processes: Array<{ ooms: unknown[]; oomsNotKept: number }> } } }> };
    const p = report.attempts[0]!.plugins.companion.processes[0]!;
    expect(p.ooms.length + p.oomsNotKept).toBe(226_000);
    expect(p.ooms.length).toBe(64);
  }, 100_000);

  it("a program printing 100,000 OOM messages: the first 64 are kept, the rest counted in the report and JSON", async () => {
    const scenario = join(tmp.dir, 'print-flood-scenario.txt');
    writeScenario(scenario, { driverVersion: '590.44.01', cudaVersion: 13010, devices: [fakeH100(0)] });
    const args = ['--interval-ms', '50', '--no-history', '--no-companion', '--', process.execPath, join(PROCS, 'oom-print-flood.mjs'), '100000'];
    const env = { ...fakeNvmlEnv('590', scenario), XDG_RUNTIME_DIR: tmp.dir };
    const r = await gpumem(['run', '--json', ...args], { env, timeoutMs: 90_000 });
    expectClean(r, 'OOM text flood in the output', 400 * MiB);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { attempts: Array<{ ooms: Array<{ line: number }>; oomsNotKept: number }> };
    const a = report.attempts[0]!;
    expect(a.ooms.length).toBe(64);
    expect(a.ooms[63]!.line).toBe(64);
    expect(a.oomsNotKept).toBe(100_000 - 64);
    const text = await gpumem(['run', ...args.slice(0, -1), '200'], { env, timeoutMs: 60_000 });
    expect(text.stderr).toContain('attempt 1: 136 more OOM messages in the output were counted but not kept (the first 64 are above)');
  }, 100_000);
});
