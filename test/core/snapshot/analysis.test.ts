/**
 * Every analysis checked against numbers the Python generator computed from its own allocator state, for
 * every schema generation and pickle protocol (2, 4, 5 and the C++ writer's unbatched protocol 2).
 */
import { describe, expect, it } from 'vitest';
import { BEFORE_RECORDING, type SiteTotal } from '../../../src/core/snapshot/index.js';
import { fixtureNames, reportOf, siteRows } from './fixtures.js';

const rows = (sites: SiteTotal[]): Array<[string, number, number]> =>
  sites.filter((s) => s.site !== BEFORE_RECORDING).map((s) => [s.site, s.bytes, s.count] as [string, number, number]).sort((a, b) => a[0].localeCompare(b[0]));

describe.each(fixtureNames())('snapshot %s', (name) => {
  const { report, expected } = reportOf(name);

  it('finds every device', () => {
    expect(report.devices.map((d) => String(d.device))).toEqual(Object.keys(expected.devices).sort());
    expect(fixtureNames().length).toBeGreaterThanOrEqual(7);
  });

  it('totals per device equal the allocator state exactly', () => {
    for (const d of report.devices) {
      const e = expected.devices[String(d.device)]!;
      const s = d.summary;
      expect([s.reservedBytes, s.allocatedBytes, s.activeBytes, s.inactiveBytes, s.segmentCount, s.blockCount]).toEqual([
        e.reservedBytes, e.allocatedBytes, e.activeBytes, e.inactiveBytes, e.segmentCount, e.blockCount,
      ]);
      expect(s.reservedBytes).toBe(s.activeBytes + s.inactiveBytes);
      // 2.0-era blocks carry requested sizes only for live blocks with history; ours are complete.
      expect(s.requestedBytes).toBe(e.requestedBytes);
      expect(s.roundingSlackBytes).toBe(e.activeBytes - e.requestedBytes);
    }
  });

  it('fragmentation per pool and stream, and the request answer', () => {
    for (const d of report.devices) {
      const e = expected.devices[String(d.device)]!;
      const pools = Object.fromEntries(d.summary.pools.map((p) => [`${p.segmentType}/${p.stream}`, { freeBytes: p.freeBytes, largestFreeBytes: p.largestFreeBytes }]));
      expect(pools).toEqual(e.pools);
      expect(d.request).toMatchObject({ requestBytes: e.request.bytes, fits: e.request.fits, unusableFreeBytes: e.request.unusableFreeBytes });
    }
  });

  it('who holds memory now, by user frame', () => {
    for (const d of report.devices) {
      expect(rows(d.sites)).toEqual(siteRows(expected.devices[String(d.device)]!.sitesNow));
    }
  });

  it('trace: peak, live set at the peak and at the OOM (none for a bare segment list)', () => {
    for (const d of report.devices) {
      const e = expected.devices[String(d.device)]!;
      if (expected.generation === 'list') {
        expect(d.trace).toBeNull();
        continue;
      }
      const t = d.trace!;
      expect(t.eventCount).toBe(e.traceLength);
      expect(t.startAllocatedBytes).toBe(0);
      expect(t.peak!.allocatedBytes).toBe(e.peak.allocatedBytes);
      expect(t.peak!.eventIndex).toBe(e.peak.eventIndex);
      expect(rows(t.peak!.sites)).toEqual(siteRows(e.peak.sites));
      expect(Math.max(...t.timeline.map((p) => p.allocatedBytes))).toBe(e.peak.allocatedBytes);
      expect(t.timeline.at(-1)!.allocatedBytes).toBe(e.allocatedBytes);
      expect(t.timeline.at(-1)!.reservedBytes).toBe(e.reservedBytes);
      expect(e.oom).not.toBeNull();
      const oom = t.ooms[0]!;
      expect([oom.requestBytes, oom.deviceFreeBytes, oom.allocatedBytes]).toEqual([e.oom!.size, e.oom!.device_free, e.oom!.allocated]);
      expect(rows(oom.sites)).toEqual(siteRows(e.oom!.live));
    }
  });
});
