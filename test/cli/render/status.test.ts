import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../../../src/core/index.js';
import { renderStatus, statusJson } from '../../../src/cli/render/status.js';
import { parseSmiXml } from '../../../src/sources/smi/index.js';

function sample(file: string): Sample {
  const r = parseSmiXml(readFileSync(new URL(`../../fixtures/nvidia-smi/${file}`, import.meta.url), 'utf8'));
  return { timeMs: Date.UTC(2026, 0, 2, 3, 4, 5), source: { kind: 'smi', detail: 'nvidia-smi -q -x' }, devices: r.devices, processes: r.processes, unavailable: r.unavailable };
}

describe('renderStatus', () => {
  const s = sample('rtx-4000-sff-ada-procs-driver-595.84.xml');
  s.processes[2]!.host = {
    visible: true, uid: 1000, user: 'alice', ppid: 1, cmdline: ['python', 'train.py', '--config', 'configs/a-very-long-config-name-that-will-not-fit.yaml'],
    exe: '/usr/bin/python3', startTimeMs: s.timeMs - 3_723_000, startTicks: 1, state: 'S', containerId: 'f'.repeat(64), nspid: [4937], cudaEnv: {}, unavailable: {},
  };

  it('is a pure function of the sample: same text every time, no colour when off', () => {
    const a = renderStatus(s, { columns: 100, color: false });
    expect(renderStatus(s, { columns: 100, color: false })).toBe(a);
    expect(a).not.toMatch(/\u001b/);
    expect(a.split('\n')[0]).toBe('via nvidia-smi (nvidia-smi -q -x) · 2026-01-02 03:04:05 UTC · driver 595.84 · CUDA 13.2');
    expect(a).toContain('3.45 GiB / 20.00 GiB (+460.00 MiB reserved)  util 0%  38°C  9W/70W');
  });

  it('shows user, memory, age, container tag and trims the command to the width', () => {
    for (const columns of [60, 100, 200]) {
      const text = renderStatus(s, { columns, color: false });
      const row = text.split('\n').find((l) => l.trimStart().startsWith('4937 '))!;
      expect(row).toMatch(/4937 {2}alice {2}160\.00 MiB {2}1h02m {2}\[ctr ffffffffff/);
      expect(row.length).toBeLessThanOrEqual(columns);
      if (columns === 60) expect(row.endsWith('…')).toBe(true);
      // Cut in its middle, not at its end: the program, the script and the last argument stay.
      if (columns === 100) expect(row).toMatch(/\] python train\.py [^…]*…[^…]*-not-fit\.yaml$/);
      if (columns === 200) expect(row).toContain('] python train.py --config configs/a-very-long-config-name-that-will-not-fit.yaml');
    }
  });

  it('colours only when asked', () => {
    expect(renderStatus(s, { columns: 100, color: true })).toMatch(/\u001b\[1m\[0\]/);
  });

  it('says when the output holds fewer GPUs than attached', () => {
    expect(renderStatus(sample('a100-sxm4-80gb-mig-driver-535.54.03.xml'), { columns: 100, color: false })).toContain('note: nvidia-smi reports 4 attached GPUs but its output holds 1');
  });

  it('json: versioned, sizes in bytes', () => {
    const j = statusJson(s) as { schemaVersion: number; devices: Array<{ memory: { totalBytes: number } }> };
    expect(j.schemaVersion).toBe(1);
    expect(j.devices[0]!.memory.totalBytes).toBe(20475 * 1024 * 1024);
  });
});

describe('renderStatus fitted to a terminal (status --watch redraws in place)', () => {
  // Eight GPUs with 64, 3, 0, 64… processes: the whole table is far taller than a terminal.
  const base = sample('rtx-4000-sff-ada-procs-driver-595.84.xml');
  const device = base.devices[0]!;
  const counts = [64, 3, 0, 64, 64, 64, 64, 64];
  const big: Sample = {
    ...base,
    devices: counts.map((_, i) => ({ ...device, index: i, uuid: `GPU-${i}` })),
    processes: counts.flatMap((n, g) => Array.from({ length: n }, (_, k) => ({ ...base.processes[0]!, pid: 1000 * (g + 1) + k, gpuIndex: g, gpuUuid: `GPU-${g}`, usedBytes: (k + 1) * 1024 * 1024 }))),
  };
  const deviceLines = (text: string): string[] => text.split('\n').filter((l) => /^\[\d\] /.test(l));

  it('keeps every GPU line, cuts each GPU\'s rows in turn and says how many it left out', () => {
    // 25 lines are the least that holds every GPU line and one line per table (1 + 8 × 2 + 8).
    for (const maxLines of [25, 26, 49, 60]) {
      const text = renderStatus(big, { columns: 120, color: false, maxLines });
      const lines = text.trimEnd().split('\n');
      expect(lines.length, `${maxLines} lines`).toBeLessThanOrEqual(maxLines);
      expect(deviceLines(text)).toHaveLength(8);
      // The GPU with 3 processes shows all three when there is room for them; the empty one says so.
      expect(text).toContain('no processes');
      const shownOn = (g: number): number => lines.filter((l) => new RegExp(`^\\s+${g + 1}0\\d\\d `).test(l)).length;
      // A cut table ends "… N more"; one with no room for rows is that line alone ("… N processes").
      const more = lines.filter((l) => l.includes('(a taller terminal')).map((l) => Number(/… (\d+) (?:more|processes?) \(/.exec(l)![1]));
      // Every process is either shown or counted in its GPU's "more" line.
      const perGpu = counts.map((n, g) => ({ n, shown: shownOn(g) }));
      const leftOut = perGpu.filter((p) => p.shown < p.n).map((p) => p.n - p.shown);
      expect(more).toEqual(leftOut);
      // Handed out in turn: the big GPUs' shown rows differ by at most one.
      const bigShown = perGpu.filter((p) => p.n === 64).map((p) => p.shown);
      expect(Math.max(...bigShown) - Math.min(...bigShown)).toBeLessThanOrEqual(1);
      expect(Math.min(...bigShown)).toBeGreaterThan(maxLines < 40 ? -1 : 0);
    }
  });

  it('is the whole table when it fits, and without maxLines', () => {
    const whole = renderStatus(big, { columns: 120, color: false });
    expect(renderStatus(big, { columns: 120, color: false, maxLines: 10_000 })).toBe(whole);
    // Source line, a blank and a GPU line each, a header per non-empty table, "no processes", every row.
    expect(whole.trimEnd().split('\n')).toHaveLength(1 + 8 * 2 + 7 + 1 + 64 * 6 + 3);
  });

  it('a terminal too short even for one line per table shows the frame\'s top and how many lines did not fit', () => {
    const lines = renderStatus(big, { columns: 120, color: false, maxLines: 12 }).trimEnd().split('\n');
    expect(lines).toHaveLength(12);
    expect(lines[11]).toMatch(/^… \d+ more lines \(a taller terminal shows them\)$/);
  });
});
