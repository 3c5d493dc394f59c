/**
 * The fake driver's per-process utilization follows the real driver's timestamp protocol when the scenario
 * gives no timestamped samples: the driver samples on its own period whether anyone reads or not, a read gets
 * every sample newer than lastSeenTimeStamp (0: the whole buffer), and NOT_FOUND when none was taken since.
 * That is what lets gpumem read SM % every few seconds and lose nothing, so the fake must not hand out one
 * fresh sample per call. Called straight through koffi, as gpumem's source calls it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import koffi from 'koffi';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeH100, fakeNvmlLib, writeScenario } from '../../fake-nvml/scenario.js';
import { BIN } from '../../helpers/cli.js';
import { GiB } from '../../../src/core/units.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-fake-util-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const scenario = join(dir, 'scenario.txt');
const PIDS = [4_200_001, 4_200_002, 4_200_003];
writeScenario(scenario, {
  driverVersion: '590.48.01', cudaVersion: 13010,
  devices: [fakeH100(0, { processes: PIDS.map((pid, i) => ({ pid, usedBytes: GiB, smUtilPct: 20 + i })) })],
});
process.env.GPUMEM_FAKE_NVML_SCENARIO = scenario;

const PERIOD_US = 166_667;
const SAMPLE_SIZE = 32;
const NOT_FOUND = 6;
const INSUFFICIENT_SIZE = 7;

const lib = koffi.load(fakeNvmlLib('590'));
const init = lib.func('nvmlInit_v2', 'int', []) as () => number;
const handleByIndex = lib.func('nvmlDeviceGetHandleByIndex_v2', 'int', ['uint', koffi.out('void **')]) as (i: number, out: unknown[]) => number;
const processUtil = lib.func('nvmlDeviceGetProcessUtilization', 'int', ['void *', 'void *', 'uint *', 'uint64']) as (h: unknown, buf: Buffer | null, count: Uint32Array, lastSeen: bigint) => number;

/** One read with the count-then-fill protocol: the samples as [pid, timeStampUs, smUtil], or the return code. */
function read(handle: unknown, lastSeenUs: bigint): Array<[number, bigint, number]> | number {
  const count = new Uint32Array(1);
  let rc = processUtil(handle, null, count, lastSeenUs);
  if (rc !== INSUFFICIENT_SIZE) return rc;
  count[0] = (count[0] as number) * 2 + 5;
  const buf = Buffer.alloc((count[0] as number) * SAMPLE_SIZE);
  rc = processUtil(handle, buf, count, lastSeenUs);
  if (rc !== 0) return rc;
  return Array.from({ length: count[0] as number }, (_, i) => [buf.readUInt32LE(i * SAMPLE_SIZE), buf.readBigUInt64LE(i * SAMPLE_SIZE + 8), buf.readUInt32LE(i * SAMPLE_SIZE + 16)]);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('fake per-process utilization: the timestamp protocol of a real driver', () => {
  expect(init()).toBe(0);
  const out: unknown[] = [null];
  expect(handleByIndex(0, out)).toBe(0);
  const handle = out[0];

  it('lastSeen 0 returns the whole buffer: a minute of samples on the driver\'s grid, one per process per period', () => {
    const all = read(handle, 0n);
    if (typeof all === 'number') throw new Error(`rc ${all}`);
    const stamps = [...new Set(all.map(([, ts]) => ts))].sort((a, b) => (a < b ? -1 : 1));
    expect(stamps.length).toBe(360);
    expect(all.length).toBe(360 * PIDS.length);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]! - stamps[i - 1]!).toBe(BigInt(PERIOD_US));
    expect(stamps.every((ts) => ts % BigInt(PERIOD_US) === 0n)).toBe(true);
    expect(new Set(all.map(([pid, , sm]) => `${pid}:${sm}`))).toEqual(new Set(PIDS.map((pid, i) => `${pid}:${20 + i}`)));
  });

  it('a read after a wait gets every period since the newest sample seen; one right after gets NOT_FOUND', async () => {
    const first = read(handle, 0n);
    if (typeof first === 'number') throw new Error(`rc ${first}`);
    const newest = first.reduce((m, [, ts]) => (ts > m ? ts : m), 0n);
    const startedMs = Date.now();
    await sleep(700);
    const later = read(handle, newest);
    const nowUs = BigInt(Date.now()) * 1000n;
    if (typeof later === 'number') throw new Error(`rc ${later}`);
    const stamps = [...new Set(later.map(([, ts]) => ts))].sort((a, b) => (a < b ? -1 : 1));
    // Every period boundary after `newest` up to now, none skipped, none older.
    expect(stamps[0]).toBe(newest + BigInt(PERIOD_US));
    expect(stamps[stamps.length - 1]! <= nowUs && nowUs - stamps[stamps.length - 1]! < BigInt(PERIOD_US)).toBe(true);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]! - stamps[i - 1]!).toBe(BigInt(PERIOD_US));
    expect(stamps.length).toBeGreaterThanOrEqual(Math.floor(((Date.now() - startedMs) * 1000 - PERIOD_US) / PERIOD_US));
    expect(later.length).toBe(stamps.length * PIDS.length);
    // Nothing newer than the newest sample until the driver's next period: NOT_FOUND.
    const newer = stamps[stamps.length - 1]!;
    const again = read(handle, newer);
    const crossed = BigInt(Date.now()) * 1000n >= newer + BigInt(PERIOD_US);
    if (!crossed) expect(again).toBe(NOT_FOUND);
  });
});

describe('GPUMEM_FAKE_NVML_CALLS_LOG', () => {
  it('appends the counts at each sample boundary of a live command, so calls between two lines are known', async () => {
    const log = join(dir, 'calls.ndjson');
    const env = { PATH: process.env.PATH ?? '', GPUMEM_NVML_LIB: fakeNvmlLib('590'), GPUMEM_FAKE_NVML_SCENARIO: scenario, GPUMEM_FAKE_NVML_CALLS_LOG: log };
    const child = spawn(process.execPath, [BIN, 'status', '--watch', '--interval', '300', '--source', 'nvml'], { env, stdio: 'ignore' });
    await sleep(2500);
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { tMs: number; calls: Record<string, { count: number }> });
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < lines.length; i++) {
      const [a, b] = [lines[i - 1]!, lines[i]!];
      expect(b.tMs).toBeGreaterThan(a.tMs);
      // One sample between two boundaries: one memory read per sample on this one GPU.
      expect(b.calls.nvmlDeviceGetMemoryInfo_v2!.count - a.calls.nvmlDeviceGetMemoryInfo_v2!.count).toBe(1);
    }
  });
});
