/**
 * `gpumem status` and `gpumem record` against the fake nvidia-smi and recordings: in-process, and once as the
 * built executable for Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/sources/replay/index.js';
import { MiB, XML_EXPECTED } from '../sources/smi/expected.js';
import { BIN, gpumemInProcess, type CliResult } from '../helpers/cli.js';

const FAKE_DIR = fileURLToPath(new URL('../fake-smi/', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../fixtures/nvidia-smi/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-status-'));
const NO_NVML = join(dir, 'absent-libnvidia-ml.so.1');
const sleeper = spawn('/bin/sleep', ['30'], { stdio: 'ignore' });
afterAll(() => sleeper.kill('SIGKILL'));

const gpumem = (args: string[], env: Record<string, string> = {}): Promise<CliResult> =>
  gpumemInProcess(args, { env: { PATH: `${FAKE_DIR}:${process.env.PATH}`, GPUMEM_NVML_LIB: NO_NVML, ...env } });

const liveXml = join(dir, 't4-live.xml');
writeFileSync(liveXml, readFileSync(join(FIXTURES, 'tesla-t4-procs-driver-515.105.01.xml'), 'utf8').replace('<pid>5762</pid>', `<pid>${sleeper.pid}</pid>`));

describe('gpumem status --json', () => {
  for (const exp of XML_EXPECTED) {
    it(`matches nvidia-smi byte for byte: ${exp.file}`, async () => {
      const r = await gpumem(['status', '--json', '--source', 'smi'], { GPUMEM_FAKE_SMI_XML: exp.file });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(doc.schemaVersion).toBe(1);
      expect(doc.source.kind).toBe('smi');
      expect(doc.devices.map((d: { memory: unknown }) => d.memory)).toEqual(
        exp.gpus.map((g) => ({ totalBytes: g.total * MiB, reservedBytes: g.reserved === null ? null : g.reserved * MiB, usedBytes: g.used * MiB, freeBytes: g.free * MiB })),
      );
      expect(doc.processes.map((p: { pid: number; usedBytes: number | null }) => [p.pid, p.usedBytes])).toEqual(
        exp.gpus.flatMap((g) => g.procs.map(([pid, , mib]) => [pid, mib === null ? null : mib * MiB])),
      );
    });
  }
});

describe('gpumem status (human view)', () => {
  it('shows each GPU and its processes with user, memory and command; plain when not a TTY', async () => {
    const r = await gpumem(['status'], { GPUMEM_FAKE_SMI_XML: liveXml });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/\u001b\[/);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^via nvidia-smi \(nvidia-smi -q -x\) · .* · driver 515\.105\.01 · CUDA 11\.7$/);
    expect(r.stdout).toContain('[0] Tesla T4');
    expect(r.stdout).toContain('1.01 GiB / 15.00 GiB (+388.00 MiB reserved)');
    const mine = lines.find((l) => l.trimStart().startsWith(`${sleeper.pid} `))!;
    expect(mine).toMatch(/1005\.00 MiB/);
    expect(mine).toContain('/bin/sleep 30');
    expect(mine).not.toContain('not visible');
    const xorg = lines.find((l) => l.trimStart().startsWith('675 '));
    expect(xorg === undefined || xorg.includes('(G)')).toBe(true);
  });

  it('two runs on the same input print the same text apart from the time', async () => {
    const strip = (s: string): string => s.replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/, 'T').replace(/\s\d+(\.\d)?s\s|\s\d+ms\s/g, ' AGE ');
    const rec = await record(2);
    const a = (await gpumem(['status', '--replay', rec])).stdout;
    const b = (await gpumem(['status', '--replay', rec])).stdout;
    expect(strip(a)).toBe(strip(b));
  });

  it('no driver at all: what was tried and what to do, exit 3', async () => {
    const r = await gpumem(['status'], { PATH: '/nonexistent' });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    const [first, hint, ...rest] = r.stderr.trimEnd().split('\n');
    expect(first).toMatch(/^gpumem: error: no GPU access: NVML library ".*absent-libnvidia-ml\.so\.1": No such file or directory; nvidia-smi not found on PATH$/);
    expect(hint).toMatch(/^hint: .*--replay FILE/);
    expect(rest).toEqual([]);
  });

  it('a bad recording is one error line naming the file and line, exit 2', async () => {
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(bad, '{"format":"gpumem-recording","version":1,"createdMs":1}\n{"timeMs":1}\n');
    const r = await gpumem(['status', '--replay', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad\.ndjson:2: sample has no devices array/);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});

let recordings = 0;
/** A live one-sample recording (--duration 0), then copied `samples` times through --replay: no timing involved. */
async function record(samples: number): Promise<string> {
  const one = join(dir, `one-${recordings}.ndjson`);
  const r = await gpumem(['record', '--out', one, '--duration', '0', '--source', 'smi', '--note', 'from the T4 fixture'], { GPUMEM_FAKE_SMI_XML: liveXml });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain(`wrote 1 sample to ${one}`);
  const line = readFileSync(one, 'utf8').trimEnd().split('\n');
  const many = join(dir, `rec-${recordings++}.ndjson`);
  // The host-facts definitions come before the one sample (a whole one: a recording starts with a keyframe).
  const sample = JSON.parse(line[line.length - 1]!);
  writeFileSync(many, [...line.slice(0, -1), ...Array.from({ length: samples }, (_, i) => JSON.stringify({ ...sample, timeMs: sample.timeMs + i * 1000 }))].join('\n') + '\n');
  return many;
}

describe('gpumem record and --replay', () => {
  it('records samples with host facts and replays them', async () => {
    const out = await record(3);
    const { header, samples } = readRecording(out);
    expect(header.note).toBe('from the T4 fixture');
    expect(header.intervalMs).toBe(1000);
    expect(samples).toHaveLength(3);
    const mine = samples[0]!.processes.find((p) => p.pid === sleeper.pid)!;
    expect(mine.host?.cmdline).toEqual(['/bin/sleep', '30']);
    const r = await gpumem(['status', '--json', '--replay', out], { PATH: '/nonexistent' });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.source.kind).toBe('replay');
    expect(doc.devices[0].memory.usedBytes).toBe(1032 * MiB);
    // Recorded host facts are kept, not re-read from this machine.
    expect(doc.processes.find((p: { pid: number }) => p.pid === sleeper.pid).host.cmdline).toEqual(['/bin/sleep', '30']);
    const human = await gpumem(['status', '--replay', out], { PATH: '/nonexistent' });
    expect(human.stdout.split('\n')[0]).toMatch(new RegExp(`^replaying ${out.replace(/[.]/g, '\\.')} \\(recorded via smi\\) — recorded .*: from the T4 fixture`));
  });

  it('status --watch plays a recording through and ends', async () => {
    const out = await record(3);
    const r = await gpumem(['status', '--watch', '--interval', '50', '--json', '--replay', out]);
    expect(r.code).toBe(0);
    const docs = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(docs).toHaveLength(3);
    expect(docs.map((d) => d.timeMs)).toEqual([...docs.map((d) => d.timeMs)].sort((a, b) => a - b));
  });

  it('record --replay copies a recording sample for sample', async () => {
    const src = await record(4);
    const copy = join(dir, 'copy.ndjson');
    const r = await gpumem(['record', '--out', copy, '--interval', '10', '--replay', src]);
    expect(r.code, r.stderr).toBe(0);
    expect(readRecording(copy).samples.map((s) => s.timeMs)).toEqual(readRecording(src).samples.map((s) => s.timeMs));
  });

  it('record without --out is a usage error', async () => {
    const r = await gpumem(['record']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/needs --out FILE/);
  });
});

describe('gpumem status --watch on a live source', () => {
  it('Ctrl-C ends it cleanly with exit 0', async () => {
    const child = spawn(process.execPath, [BIN, 'status', '--watch', '--interval', '100', '--source', 'smi'], {
      env: { PATH: `${FAKE_DIR}:${process.env.PATH}`, GPUMEM_NVML_LIB: NO_NVML, GPUMEM_FAKE_SMI_XML: liveXml },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if ((out.match(/\[0\] Tesla T4/g) ?? []).length >= 2) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect((out.match(/\[0\] Tesla T4/g) ?? []).length).toBeGreaterThanOrEqual(2);
  });
});
