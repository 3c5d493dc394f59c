/** The channel parser: valid messages round-trip, anything else is one GpumemError, and chunking never matters. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLineSplitter, MAX_LINE_CHARS, parseCompanionLine } from '../../../src/core/companion/index.js';
import { GpumemError } from '../../../src/core/index.js';

const count = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
const countOrNull = fc.option(count, { nil: null });
const stats = fc.record({
  device: fc.integer({ min: 0, max: 15 }),
  allocatedBytes: countOrNull, reservedBytes: countOrNull, activeBytes: countOrNull, inactiveSplitBytes: countOrNull,
  requestedBytes: countOrNull, peakAllocatedBytes: countOrNull, peakReservedBytes: countOrNull,
  peakActiveBytes: countOrNull, numAllocRetries: countOrNull, numOoms: countOrNull,
});
const base = { schemaVersion: fc.constant(1), pid: fc.integer({ min: 1, max: 4194304 }), timeMs: count };
const message = fc.oneof(
  fc.record({ ...base, type: fc.constant('stats'), seq: count, devices: fc.array(stats, { maxLength: 4 }) }),
  fc.record({
    ...base, type: fc.constant('oom'), source: fc.constantFrom('observer', 'counter'), device: fc.nat(7),
    requestedBytes: countOrNull, deviceLimitBytes: countOrNull, deviceFreeBytes: countOrNull,
    stats: fc.option(stats, { nil: null }), snapshotPath: fc.option(fc.string(), { nil: null }),
    snapshotError: fc.option(fc.string(), { nil: null }),
  }),
  fc.record({ ...base, type: fc.constant('error'), what: fc.string(), message: fc.string() }),
  fc.record({ ...base, type: fc.constant('bye'), dropped: count }),
  // Per-step memory: each step's peaks at least its current values, as the allocator keeps them.
  fc.array(fc.tuple(count, count, count, count), { minLength: 1, maxLength: 20 }).chain((rows) => fc.record({
    ...base, type: fc.constant('memory'), device: fc.nat(7), boundary: fc.constantFrom('optimizer', 'dataloader'), firstStep: fc.integer({ min: 1, max: 1e9 }),
    leftBytes: fc.constant(rows.map(([a, b]) => Math.min(a, b))), peakAllocatedBytes: fc.constant(rows.map(([a, b]) => Math.max(a, b))),
    reservedBytes: fc.constant(rows.map(([, , c, d]) => Math.min(c, d))), peakReservedBytes: fc.constant(rows.map(([, , c, d]) => Math.max(c, d))), dropped: count,
  })),
  fc.record({
    ...base, type: fc.constant('sites'), device: fc.nat(7), fromStep: fc.nat(1000), toStep: fc.integer({ min: 1001, max: 1e9 }), leftGrewBytes: count,
    sites: fc.array(fc.record({ site: fc.string(), bytes: count, blocks: fc.nat(1e6) }), { maxLength: 5 }),
  }),
  fc.record({ ...base, type: fc.constant('cuda'), problem: fc.string() }),
  fc.tuple(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.double({ min: 0, max: 1e9, noNaN: true })).chain(([a, b]) => fc.record({
    ...base, type: fc.constant('steps'), steps: count, dataWaitMs: fc.constant(Math.min(a, b)), stepMs: fc.constant(Math.max(a, b)), samples: count,
    batchSeen: countOrNull, batchMin: countOrNull, batchMax: countOrNull, batchAsked: countOrNull,
    loader: fc.option(fc.record({ numWorkers: countOrNull, pinMemory: fc.option(fc.boolean(), { nil: null }),
      persistentWorkers: fc.option(fc.boolean(), { nil: null }), prefetchFactor: countOrNull }), { nil: null }),
    cpuCount: countOrNull,
    tokens: countOrNull,
    boundary: fc.constantFrom('dataloader', 'optimizer', null),
    compute: fc.option(fc.record({
      forwardMs: fc.double({ min: 0, max: 1e9, noNaN: true }), forwardCount: count, backwardMs: fc.double({ min: 0, max: 1e9, noNaN: true }),
      backwardCount: count, optimizerMs: fc.double({ min: 0, max: 1e9, noNaN: true }), optimizerCount: count, everySteps: count, dropped: count,
    }), { nil: null }),
    copies: fc.option(fc.tuple(count, count, count).map(([a, b, c]) => {
      const [blockingBytes, pageableBytes, bytes] = [Math.min(a, c), Math.min(b, c), Math.max(a, b, c)];
      return { count: 3, bytes, ms: 1.5, blockingCount: 2, blockingBytes, blockingMs: 1, pageableBytes };
    }), { nil: null }),
    syncs: fc.option(fc.record({ steps: count, byKind: fc.dictionary(fc.constantFrom('item', 'cpu', 'tolist', 'synchronize'), fc.record({ count, ms: fc.double({ min: 0, max: 1e6, noNaN: true }) })) }), { nil: null }),
  }, { requiredKeys: ['schemaVersion', 'pid', 'timeMs', 'type', 'steps', 'dataWaitMs', 'stepMs', 'samples', 'batchSeen', 'batchMin', 'batchMax', 'batchAsked'] })),
);

describe('parseCompanionLine', () => {
  it('reads the hello\'s CUDA status, null for an older companion, and refuses a malformed one', () => {
    const hello = { schemaVersion: 1, type: 'hello', pid: 5, timeMs: 1, ppid: 1, companionVersion: '0.1.0', torchVersion: '2.15.0',
      pythonVersion: '3.12.0', capabilities: {}, config: { rateHz: 10, snapshotDir: null, snapshotMaxEntries: 20000, memoryFraction: 0.5 } };
    const cuda = { compiled: false, cudaVersion: null, visibleDevices: '', driverLoaded: true, problem: 'CPU-only build' };
    expect(parseCompanionLine(JSON.stringify({ ...hello, cuda }))).toMatchObject({ type: 'hello', cuda });
    expect(parseCompanionLine(JSON.stringify(hello))).toMatchObject({ type: 'hello', cuda: null });
    expect(() => parseCompanionLine(JSON.stringify({ ...hello, cuda: { ...cuda, compiled: 'no' } }))).toThrow(/cuda\.compiled: expected true, false or null/);
  });


  it('returns exactly what the companion sent for every valid message', () => {
    fc.assert(fc.property(message, (m) => {
      expect(parseCompanionLine(JSON.stringify(m))).toEqual(m);
    }));
  });

  it('throws only GpumemError INPUT_MALFORMED on arbitrary input, never anything else', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), (line) => {
      try {
        parseCompanionLine(line, 'pid 7');
      } catch (error) {
        expect(error).toBeInstanceOf(GpumemError);
        expect((error as GpumemError).code).toBe('INPUT_MALFORMED');
        expect((error as GpumemError).message.startsWith('pid 7: ')).toBe(true);
      }
    }));
  });

  it('refuses steps whose data wait is negative or longer than the steps', () => {
    const steps = { schemaVersion: 1, pid: 5, timeMs: 1, type: 'steps', steps: 3, dataWaitMs: 4, stepMs: 3, samples: 9, batchSeen: 3, batchMin: 3, batchMax: 3, batchAsked: null };
    expect(() => parseCompanionLine(JSON.stringify(steps))).toThrow(/dataWaitMs: is longer than stepMs/);
    expect(() => parseCompanionLine(JSON.stringify({ ...steps, dataWaitMs: -1 }))).toThrow(/dataWaitMs: expected a non-negative number/);
    expect(parseCompanionLine(JSON.stringify({ ...steps, dataWaitMs: 1.5 }))).toEqual({ ...steps, dataWaitMs: 1.5 });
    const copies = { count: 2, bytes: 100, ms: 1, blockingCount: 1, blockingBytes: 101, blockingMs: 0.5, pageableBytes: 0 };
    expect(() => parseCompanionLine(JSON.stringify({ ...steps, dataWaitMs: 1, copies }))).toThrow(/copies: blocking or pageable figures exceed the totals/);
    const syncs = JSON.parse('{"steps": 1, "byKind": {"__proto__": {"count": 1, "ms": 1}}}') as unknown;
    expect(() => parseCompanionLine(JSON.stringify({ ...steps, dataWaitMs: 1, syncs }))).toThrow(/syncs.byKind: unexpected kind "__proto__"/);
  });

  it('names the bad field', () => {
    const line = JSON.stringify({ schemaVersion: 1, type: 'stats', pid: 3, timeMs: 1, seq: 1, devices: [{ device: 0, allocatedBytes: -5 }] });
    expect(() => parseCompanionLine(line)).toThrow(/devices\[0\]\.allocatedBytes: expected a non-negative integer/);
    const frac = JSON.stringify({ schemaVersion: 1, type: 'bye', pid: 3, timeMs: 1, dropped: 1.5 });
    expect(() => parseCompanionLine(frac)).toThrow(/dropped/);
  });

  it('refuses a newer schema and skips unknown message types of this one', () => {
    expect(() => parseCompanionLine('{"schemaVersion":2,"type":"bye","pid":1,"timeMs":1,"dropped":0}')).toThrow(/schemaVersion 2/);
    expect(parseCompanionLine('{"schemaVersion":1,"type":"future","pid":1,"timeMs":1}')).toBeNull();
    expect(parseCompanionLine('   ')).toBeNull();
  });
});

describe('createLineSplitter', () => {
  it('yields the same lines however the stream is cut', () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: 'grapheme' }).map((s) => s.replace(/\n/g, ' ')), { maxLength: 10 }), fc.array(fc.nat(40), { maxLength: 10 }), (lines, cuts) => {
      const text = lines.map((l) => `${l}\n`).join('');
      const splitter = createLineSplitter();
      const out: string[] = [];
      let at = 0;
      for (const c of cuts) {
        out.push(...splitter.push(text.slice(at, at + c)));
        at += c;
      }
      out.push(...splitter.push(text.slice(at)), ...splitter.end());
      expect(out).toEqual(lines);
    }));
  });

  it('hands out an over-long line once and drops the rest of it', () => {
    const splitter = createLineSplitter();
    const first = splitter.push('x'.repeat(MAX_LINE_CHARS + 10));
    expect(first).toHaveLength(1);
    expect(() => parseCompanionLine(first[0] as string)).toThrow(/longer than/);
    expect(splitter.push('yyyy\n{"a":1}\n')).toEqual(['{"a":1}']);
  });
});
