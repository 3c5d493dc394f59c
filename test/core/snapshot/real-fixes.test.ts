/** The snapshot reader on real snapshots from real GPUs: the faults they exposed stay fixed. */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEFORE_RECORDING, buildReport, readSnapshotPickle, siteOf } from '../../../src/core/snapshot/index.js';
import { renderSnapshotHtml } from '../../../src/cli/render/snapshot-html.js';
import { renderSnapshotText } from '../../../src/cli/render/snapshot-text.js';

const dir = new URL('../../fixtures/snapshot/real/', import.meta.url);
const names = readdirSync(dir).filter((n) => n !== 'SOURCES.md');
const load = (name: string) => readSnapshotPickle(new Uint8Array(readFileSync(new URL(name, dir))));

describe('real snapshots', () => {
  it.each(names)('%s: renders as text and HTML; the trace start never has more allocated than reserved', (name) => {
    const report = buildReport(load(name), { top: 10, requestBytes: null });
    expect(() => renderSnapshotHtml(report, name)).not.toThrow();
    const text = renderSnapshotText(report, 100, false);
    expect(text).not.toMatch(/\(;/);
    for (const d of report.devices) {
      if (d.trace) expect(d.trace.startAllocatedBytes).toBeLessThanOrEqual(d.trace.startReservedBytes);
    }
  });

  it('a trace that starts with the process starts at zero and has nothing "allocated before the trace began"', () => {
    const report = buildReport(load('constructor_memory_snapshot.pickle'), { top: 50, requestBytes: null });
    for (const d of report.devices.filter((x) => x.trace)) {
      expect(d.trace?.startAllocatedBytes).toBe(0);
      expect(d.trace?.peak?.sites.map((s) => s.site)).not.toContain(BEFORE_RECORDING);
    }
  });

  it('with C++ frames recorded the site is the innermost Python frame of user code', () => {
    const snap = load('octreenca_my_snapshot.pickle');
    const sites = snap.segments.flatMap((s) => s.blocks.filter((b) => b.frames.length > 0).map((b) => siteOf(b.frames)));
    expect(sites.length).toBeGreaterThan(0);
    for (const site of sites) expect(site).toMatch(/\.py:\d+ /);
  });

  it('autograd-thread allocations without a Python frame read "backward of <node>", never a libstdc++ file', () => {
    const snap = load('cranberrii_memory_snapshot.pickle');
    const sites = (snap.traces[0]?.stacks ?? []).map((s) => siteOf(s));
    expect(sites.some((s) => /^backward of \w+Backward\d*$/.test(s))).toBe(true);
    expect(sites.filter((s) => /\.(c|cc|cpp|o):\d+/.test(s))).toEqual([]);
  });

  it('the text counts allocated blocks as allocated, and a device without segments prints "0 segments"', () => {
    const snap = load('kkaitlyn_ctx128_forward_mixed.pickle');
    const report = buildReport(snap, { top: 5, requestBytes: null });
    const allocated = snap.segments.flatMap((s) => s.blocks).filter((b) => b.state === 'active_allocated').length;
    expect(report.devices[0]?.summary.allocatedBlockCount).toBe(allocated);
    expect(renderSnapshotText(report, 100, false)).toMatch(new RegExp(`allocated\\s+\\S+ \\S+\\s+${allocated} blocks`));
    const empty = renderSnapshotText(buildReport(load('muduard_dump_snapshot.pickle'), { top: 5, requestBytes: null }), 100, false);
    expect(empty).toMatch(/0 segments\b/);
  });
});
