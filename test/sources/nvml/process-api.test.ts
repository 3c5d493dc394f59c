/** The process-call choice per driver era, and entry decoding with its stride sanity checks (fuzzed). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NO_INSTANCE_ID, type ProcessStride } from '../../../src/sources/nvml/layouts.js';
import { chooseProcessApi, decodeProcessEntries, type ProcessEntry } from '../../../src/sources/nvml/process-api.js';

const has = (...symbols: string[]) => (s: string): boolean => symbols.includes(s);

describe('chooseProcessApi', () => {
  it('follows the era rules', () => {
    const v3 = 'nvmlDeviceGetComputeRunningProcesses_v3';
    const v2 = 'nvmlDeviceGetComputeRunningProcesses_v2';
    const cc = 'nvmlDeviceGetConfComputeMemSizeInfo';
    const detail = 'nvmlDeviceGetRunningProcessDetailList';
    expect(chooseProcessApi(has(), 'Compute')).toMatchObject({ suffix: '', stride: 16 });
    expect(chooseProcessApi(has(v2), 'Compute')).toMatchObject({ suffix: '_v2', stride: 24 });
    expect(chooseProcessApi(has(v2, v3), 'Compute')).toMatchObject({ suffix: '_v3', stride: 24 });
    expect(chooseProcessApi(has(v2, v3, cc), 'Compute')).toMatchObject({ suffix: '_v3', stride: 32 });
    expect(chooseProcessApi(has(v2, v3, cc, detail), 'Compute')).toMatchObject({ suffix: '_v3', stride: 24 });
    // 535.98 removed _v3 while keeping the confidential-computing call: back to _v2.
    expect(chooseProcessApi(has(v2, cc), 'Compute')).toMatchObject({ suffix: '_v2', stride: 24 });
    expect(chooseProcessApi(has('nvmlDeviceGetGraphicsRunningProcesses_v3'), 'Graphics')).toMatchObject({ suffix: '_v3' });
  });
});

function encode(entries: ProcessEntry[], stride: ProcessStride): Buffer {
  const buf = Buffer.alloc(Math.max(1, entries.length) * 32);
  entries.forEach((e, i) => {
    const at = i * stride;
    buf.writeUInt32LE(e.pid, at);
    buf.writeBigUInt64LE(e.usedBytes === null ? 0xffffffffffffffffn : BigInt(e.usedBytes), at + 8);
    if (stride >= 24) {
      buf.writeUInt32LE(e.gpuInstanceId ?? NO_INSTANCE_ID, at + 16);
      buf.writeUInt32LE(e.computeInstanceId ?? NO_INSTANCE_ID, at + 20);
    }
    if (stride === 32) buf.writeBigUInt64LE(BigInt(e.usedBytes ?? 0) / 2n, at + 24);
  });
  return buf;
}

const TOTAL = 80 * 1024 ** 3;
const entry = fc.record({
  pid: fc.integer({ min: 1, max: 4194304 }),
  usedBytes: fc.option(fc.integer({ min: 0, max: TOTAL }), { nil: null }),
  gpuInstanceId: fc.option(fc.integer({ min: 0, max: 14 }), { nil: null }),
  computeInstanceId: fc.option(fc.integer({ min: 0, max: 7 }), { nil: null }),
});

describe('decodeProcessEntries', () => {
  it('round-trips entries at their own stride, NOT_AVAILABLE as null', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), fc.constantFrom<ProcessStride>(24, 32), (entries, stride) => {
        expect(decodeProcessEntries(encode(entries, stride), entries.length, stride, TOTAL)).toEqual(entries);
      }),
    );
  });

  it('v1 entries carry no instance ids', () => {
    const decoded = decodeProcessEntries(encode([{ pid: 7, usedBytes: 5, gpuInstanceId: 1, computeInstanceId: 0 }], 16), 1, 16, TOTAL);
    expect(decoded).toEqual([{ pid: 7, usedBytes: 5, gpuInstanceId: null, computeInstanceId: null }]);
  });

  it('rejects 32-byte entries read as 24 (the 535.54 symptom) when there are two or more', () => {
    const entries: ProcessEntry[] = [
      { pid: 100, usedBytes: 2 ** 30, gpuInstanceId: null, computeInstanceId: null },
      { pid: 200, usedBytes: 2 ** 31, gpuInstanceId: null, computeInstanceId: null },
      { pid: 300, usedBytes: 2 ** 29, gpuInstanceId: null, computeInstanceId: null },
    ];
    expect(decodeProcessEntries(encode(entries, 32), 3, 24, TOTAL)).toBeNull();
    expect(decodeProcessEntries(encode(entries, 24), 3, 32, TOTAL)).toBeNull();
  });

  it('rejects memory above the device total and pids out of range', () => {
    const big = encode([{ pid: 1, usedBytes: TOTAL + 1, gpuInstanceId: null, computeInstanceId: null }], 24);
    expect(decodeProcessEntries(big, 1, 24, TOTAL)).toBeNull();
    expect(decodeProcessEntries(big, 1, 24, null)).not.toBeNull();
    const pid0 = encode([{ pid: 0, usedBytes: 1, gpuInstanceId: null, computeInstanceId: null }], 24);
    expect(decodeProcessEntries(pid0, 1, 24, TOTAL)).toBeNull();
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.integer({ min: 0, max: 20 }), fc.constantFrom<ProcessStride>(16, 24, 32), (bytes, n, stride) => {
        const out = decodeProcessEntries(Buffer.from(bytes), n, stride, TOTAL);
        if (out) for (const e of out) expect(e.pid).toBeGreaterThan(0);
      }),
    );
  });
});
