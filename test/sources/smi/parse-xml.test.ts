import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseSmiXml } from '../../../src/sources/smi/index.js';
import { GpumemError } from '../../../src/core/index.js';
import { MiB, XML_EXPECTED } from './expected.js';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/nvidia-smi/${name}`, import.meta.url), 'utf8');
const KIND = { C: 'compute', G: 'graphics', 'C+G': 'compute+graphics' } as const;

describe('parseSmiXml on every real fixture', () => {
  for (const exp of XML_EXPECTED) {
    it(exp.file, () => {
      const r = parseSmiXml(fixture(exp.file));
      expect(r.driverVersion).toBe(exp.driver);
      expect(r.cudaVersion).toBe(exp.cuda);
      expect(r.attachedGpus).toBe(exp.attached);
      expect(r.devices.map((d) => d.uuid)).toEqual(exp.gpus.map((g) => g.uuid));
      exp.gpus.forEach((g, i) => {
        const d = r.devices[i]!;
        expect(d.index).toBe(i);
        expect(d.memory).toEqual({
          totalBytes: g.total * MiB,
          reservedBytes: g.reserved === null ? null : g.reserved * MiB,
          usedBytes: g.used * MiB,
          freeBytes: g.free * MiB,
        });
        if (g.reserved === null) expect(d.unavailable['memory.reservedBytes']).toMatch(/R510/);
        expect(d.migMode).toBe(g.mig ? 'enabled' : null);
        expect(d.migInstances.map((m) => [m.gpuInstanceId, m.computeInstanceId, m.memory.totalBytes, m.memory.reservedBytes, m.memory.usedBytes, m.memory.freeBytes]))
          .toEqual((g.mig ?? []).map(([gi, ci, ...mib]) => [gi, ci, ...mib.map((v) => v * MiB)]));
        const procs = r.processes.filter((p) => p.gpuIndex === i);
        expect(procs.map((p) => [p.pid, p.kind, p.usedBytes])).toEqual(g.procs.map(([pid, k, mib]) => [pid, KIND[k], mib === null ? null : mib * MiB]));
        for (const p of procs) {
          expect(p.gpuUuid).toBe(g.uuid);
          if (p.usedBytes === null) expect(p.unavailable.usedBytes).toBe('[N/A] in nvidia-smi output');
        }
      });
      // The trimmed upstream file claims more GPUs than it holds: said, not hidden.
      if (exp.attached > exp.gpus.length) expect(r.unavailable.devices).toMatch(/4 attached GPUs but its output holds 1/);
      else expect(r.unavailable.devices).toBeUndefined();
    });
  }

  it('reads power in milliwatts across DTD versions (v11 power_draw, v13 average_power_draw)', () => {
    const t4 = parseSmiXml(fixture('tesla-t4-procs-driver-515.105.01.xml')).devices[0]!;
    expect([t4.powerDrawMw, t4.powerLimitMw, t4.temperatureC, t4.utilization.gpuPct]).toEqual([26780, 70000, 40, 0]);
    const ada = parseSmiXml(fixture('rtx-4000-sff-ada-procs-driver-595.84.xml')).devices[0]!;
    expect([ada.powerDrawMw, ada.powerLimitMw, ada.utilization.memoryPct]).toEqual([8810, 70000, 37]);
    const a5000 = parseSmiXml(fixture('rtx-a5000-x2-procs-driver-590.44.01.xml')).devices;
    expect(a5000.map((d) => [d.pciBusId, d.minorNumber])).toEqual([['00000000:81:00.0', 1], ['00000000:C1:00.0', 0]]);
  });

  it('MIG GPUs report utilization as null with the marker, never 0', () => {
    const d = parseSmiXml(fixture('a100-sxm4-80gb-mig-driver-535.54.03.xml')).devices[0]!;
    expect(d.utilization).toEqual({ gpuPct: null, memoryPct: null });
    expect(d.unavailable['utilization.gpuPct']).toBe('[N/A] in nvidia-smi output');
  });

  it('the vGPU/WDDM fixture has no power reading and an empty process name as null', () => {
    const r = parseSmiXml(fixture('grid-p4-1q-vgpu-wddm-procs-driver-513.46.xml'));
    expect(r.devices[0]!.powerDrawMw).toBeNull();
    expect(r.devices[0]!.minorNumber).toBeNull();
    expect(r.processes[0]!.name).toBeNull();
    expect(r.processes.at(-1)!.name).toBe('C:\\Windows\\explorer.exe');
  });

  it('names what is missing in malformed output', () => {
    const t4 = fixture('tesla-t4-procs-driver-515.105.01.xml');
    expect(() => parseSmiXml(t4.slice(0, t4.indexOf('</processes>')))).toThrow(/ends inside <process_info>|ends inside <processes>/);
    expect(() => parseSmiXml(t4.replace(/<fb_memory_usage>[\s\S]*?<\/fb_memory_usage>/, ''))).toThrow(/fb_memory_usage/);
    expect(() => parseSmiXml(t4.replace('<pid>5762</pid>', '<pid>N/A</pid>'))).toThrow(/pid of a process on GPU 0/);
    expect(() => parseSmiXml('<html><body/></html>')).toThrow(/nvidia_smi_log/);
    expect(() => parseSmiXml('')).toThrow(GpumemError);
    expect(() => parseSmiXml('NVIDIA-SMI has failed')).toThrow(/text outside the root/);
    expect(() => parseSmiXml('<a></b>')).toThrow(/<a> closed by <\/b>/);
  });

  it('decodes entities in text', () => {
    const t4 = fixture('tesla-t4-procs-driver-515.105.01.xml').replace('<process_name>python</process_name>', '<process_name>a &amp; b &#x3c;c&#62;</process_name>');
    expect(parseSmiXml(t4).processes[1]!.name).toBe('a & b <c>');
  });
});
