import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AllocatorSim, parseAllocatorConf, roundSize, allocationSize, defaultAllocatorSettings } from '../../../src/core/allocator/index.js';
import { GpumemError } from '../../../src/core/errors.js';
import { MiB } from '../../../src/core/units.js';
const d = defaultAllocatorSettings();

describe('size rules', () => {
  it('rounds to 512 bytes and picks the segment size by request', () => {
    expect(roundSize(1, d)).toBe(512);
    expect(roundSize(513, d)).toBe(1024);
    expect(allocationSize(MiB)).toBe(2 * MiB);
    expect(allocationSize(MiB + 512)).toBe(20 * MiB);
    expect(allocationSize(10 * MiB - 512)).toBe(20 * MiB);
    expect(allocationSize(10 * MiB)).toBe(10 * MiB);
    expect(allocationSize(11 * MiB)).toBe(12 * MiB);
  });
  it('rounds up to power-of-two divisions', () => {
    const s = parseAllocatorConf('roundup_power2_divisions:4');
    // 1200 MiB lies between 1024 and 2048 MiB: steps of 256 MiB.
    expect(roundSize(1200 * MiB, s)).toBe(1280 * MiB);
    expect(roundSize(1024 * MiB, s)).toBe(1024 * MiB);
    const list = parseAllocatorConf('roundup_power2_divisions:[256:1,512:2,>:8]');
    expect(list.roundupPower2Divisions.slice(0, 9)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1]);
    // As in PyTorch, ">" fills from the last listed interval on, that interval included.
    expect(list.roundupPower2Divisions[9]).toBe(8);
    expect(list.roundupPower2Divisions[15]).toBe(8);
    expect(roundSize(700 * MiB, list)).toBe(704 * MiB);
  });
});

describe('parseAllocatorConf', () => {
  it('reads every option PyTorch knows', () => {
    const s = parseAllocatorConf('expandable_segments:True, max_split_size_mb:128,garbage_collection_threshold:0.6,release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:True,pinned_num_register_threads:8');
    expect(s.expandableSegments).toBe(true);
    expect(s.maxSplitSizeBytes).toBe(128 * MiB);
    expect(s.garbageCollectionThreshold).toBe(0.6);
    expect(s.pinnedNumRegisterThreads).toBe(8);
  });
  it.each([
    ['max_split_size_mb:20', /too small/],
    ['garbage_collection_threshold:1.0', /too big/],
    ['expandable_segments:yes', /True\/False/],
    ['roundup_power2_divisions:3', /power of 2/],
    ['foo:1', /unrecognized/],
    ['max_split_size_mb 128', /unrecognized/],
    ['expandable_segments:True;max_split_size_mb:64', /True\/False/],
  ])('refuses %s', (text, reason) => {
    expect(() => parseAllocatorConf(text)).toThrow(reason);
    expect(() => parseAllocatorConf(text)).toThrow(GpumemError);
  });
  it('never throws anything but a GpumemError', () => {
    fc.assert(fc.property(fc.string(), (text) => {
      try {
        parseAllocatorConf(text);
      } catch (e) {
        expect(e).toBeInstanceOf(GpumemError);
      }
    }));
  });
});

describe('AllocatorSim', () => {
  it('packs small requests into one 2 MiB segment and splits blocks lowest address first', () => {
    const sim = new AllocatorSim();
    expect(sim.alloc(1, 1000)).toBe(true);
    expect(sim.alloc(2, 4000)).toBe(true);
    const [seg] = sim.segments();
    expect(seg?.sizeBytes).toBe(2 * MiB);
    expect(seg?.pool).toBe('small');
    expect(seg?.blocks.map((b) => [b.offset, b.sizeBytes, b.allocated])).toEqual([[0, 1024, true], [1024, 4096, true], [5120, 2 * MiB - 5120, false]]);
  });
  it('does not split a large block when less than 1 MiB would remain, and coalesces on free', () => {
    const sim = new AllocatorSim();
    sim.alloc(1, 19.5 * MiB);
    expect(sim.segments()[0]?.blocks).toHaveLength(1);
    sim.alloc(2, 5 * MiB);
    sim.alloc(3, 5 * MiB);
    expect(sim.stats().segmentCount).toBe(2);
    sim.free(2);
    sim.free(3);
    expect(sim.segments()[1]?.blocks).toEqual([{ offset: 0, sizeBytes: 20 * MiB, allocated: false, requestedBytes: 0 }]);
  });
  it('best fit: the smallest free block that holds the request', () => {
    const sim = new AllocatorSim();
    sim.alloc(1, 30 * MiB);
    sim.alloc(2, 12 * MiB);
    sim.free(1);
    sim.free(2);
    sim.alloc(3, 11 * MiB);
    expect(sim.stats().reservedBytes).toBe(42 * MiB);
    expect(sim.segments().find((s) => s.blocks[0]?.allocated)?.sizeBytes).toBe(12 * MiB);
  });
  it('frees cached segments and retries before failing, counting the retry', () => {
    const sim = new AllocatorSim({ capacityBytes: 100 * MiB });
    sim.alloc(1, 60 * MiB);
    sim.free(1);
    expect(sim.alloc(2, 80 * MiB)).toBe(true);
    expect(sim.stats().numAllocRetries).toBe(1);
    expect(sim.alloc(3, 40 * MiB)).toBe(false);
    expect(sim.stats().numOoms).toBe(1);
  });
  it('keeps oversize blocks whole and reuses them only within max_non_split_rounding', () => {
    const sim = new AllocatorSim({ settings: parseAllocatorConf('max_split_size_mb:64') });
    sim.alloc(1, 100 * MiB);
    sim.free(1);
    sim.alloc(2, 70 * MiB);
    expect(sim.stats().reservedBytes).toBe(170 * MiB);
    sim.free(2);
    sim.alloc(3, 90 * MiB);
    expect(sim.stats().reservedBytes).toBe(170 * MiB);
    sim.alloc(4, 10 * MiB); // below max_split: never served by an oversize block
    expect(sim.stats().reservedBytes).toBe(180 * MiB);
  });
  it('expandable segments grow one segment in 20 MiB pages and unmap free pages on empty_cache', () => {
    const sim = new AllocatorSim({ settings: parseAllocatorConf('expandable_segments:True') });
    sim.alloc(1, 30 * MiB);
    sim.alloc(2, 30 * MiB);
    expect(sim.stats().reservedBytes).toBe(60 * MiB);
    expect(sim.segments()).toHaveLength(1);
    sim.free(2);
    sim.emptyCache();
    expect(sim.stats().reservedBytes).toBe(40 * MiB);
    sim.free(1);
    sim.emptyCache();
    expect(sim.stats().reservedBytes).toBe(0);
    expect(sim.segments()).toHaveLength(0);
  });
  it('expandable segments let neighbouring freed blocks serve a larger request that fixed segments cannot', () => {
    const run = (conf: string): number => {
      const sim = new AllocatorSim({ settings: parseAllocatorConf(conf) });
      sim.alloc(1, 30 * MiB);
      sim.alloc(2, 30 * MiB);
      sim.free(1);
      sim.free(2);
      sim.alloc(3, 60 * MiB);
      return sim.stats().reservedBytes;
    };
    expect(run('expandable_segments:False')).toBe(120 * MiB);
    expect(run('expandable_segments:True')).toBe(60 * MiB);
  });
  it('garbage collection frees old cached segments only with a memory fraction set', () => {
    const run = (fraction: number | undefined): number => {
      const sim = new AllocatorSim({ settings: parseAllocatorConf('garbage_collection_threshold:0.25'), memoryFractionBytes: fraction });
      sim.alloc(1, 60 * MiB);
      sim.free(1);
      sim.alloc(2, 62 * MiB);
      return sim.stats().reservedBytes;
    };
    expect(run(200 * MiB)).toBe(62 * MiB);
    expect(run(undefined)).toBe(122 * MiB);
  });
  it('keeps its books: allocated never exceeds reserved, free returns everything', () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 64 * MiB })), { maxLength: 200 }), fc.boolean(), (ops, expandable) => {
      const sim = new AllocatorSim({ settings: parseAllocatorConf(`expandable_segments:${expandable ? 'True' : 'False'}`), capacityBytes: 512 * MiB });
      const live: number[] = [];
      ops.forEach(([doFree, size], id) => {
        if (doFree && live.length) sim.free(live.splice(size % live.length, 1)[0] as number);
        else if (sim.alloc(id, size)) live.push(id);
        const st = sim.stats();
        expect(st.allocatedBytes).toBeLessThanOrEqual(st.reservedBytes);
        expect(st.reservedBytes).toBe(sim.segments().reduce((s, x) => s + x.sizeBytes, 0));
      });
      for (const id of live) sim.free(id);
      sim.emptyCache();
      expect(sim.stats()).toMatchObject({ allocatedBytes: 0, reservedBytes: 0 });
    }), { numRuns: 150 });
  });
});

describe('release differences', () => {
  it('refuses options a release did not have, and keeps the fixed oversize rounding before 2.6', () => {
    expect(() => parseAllocatorConf('max_non_split_rounding_mb:64', { version: '2.4.1' })).toThrow(/unrecognized/);
    expect(() => parseAllocatorConf('expandable_segments:True', { version: '2.0.1' })).toThrow(/unrecognized/);
    const s = parseAllocatorConf('max_split_size_mb:64,max_non_split_rounding_mb:64', { version: '2.6.0' });
    const reused = (version: string): number => {
      const sim = new AllocatorSim({ settings: s, version });
      sim.alloc(1, 200 * MiB);
      sim.free(1);
      sim.alloc(2, 160 * MiB); // 40 MiB smaller: reusable only within a 64 MiB rounding limit
      return sim.stats().reservedBytes;
    };
    expect(reused('2.6.0')).toBe(200 * MiB);
    expect(reused('2.5.1')).toBe(360 * MiB);
  });
});
