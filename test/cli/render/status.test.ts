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
