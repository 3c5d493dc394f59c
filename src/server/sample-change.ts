/**
 * Whether two samples differ in what a view or a diagnosis of them would read, compared field by field
 * (numbers and references), so that work whose input did not change can be skipped.
 */
import type { Sample } from '../core/types.js';

/**
 * True when every process row would show the same text: same processes in the same order with the same
 * memory, and the same host facts (the enricher returns the very same command line and user while a
 * process lives). Compares references and numbers only, so an unchanged sample allocates nothing here.
 */
export function sameRows(a: Sample, b: Sample): boolean {
  if (a.processes.length !== b.processes.length) return false;
  for (let i = 0; i < a.processes.length; i++) {
    const p = a.processes[i]!;
    const q = b.processes[i]!;
    if (p.pid !== q.pid || p.gpuIndex !== q.gpuIndex || p.usedBytes !== q.usedBytes || p.name !== q.name) return false;
    const h = p.host;
    const k = q.host;
    if (h === k) continue;
    if (!h || !k || h.cmdline !== k.cmdline || h.user !== k.user || h.containerId !== k.containerId || h.visible !== k.visible) return false;
  }
  return true;
}

/**
 * True when a diagnosis of `b` would read the same numbers as one of `a`: every GPU's readings and every
 * process's pid, GPU, memory, SM share and host facts (the enricher hands out the same facts object while
 * nothing in it changed). Times aside: ages in findings' text are the one thing that moves on its own.
 */
export function sameReadings(a: Sample, b: Sample): boolean {
  if (a.devices.length !== b.devices.length || a.processes.length !== b.processes.length) return false;
  for (let i = 0; i < a.devices.length; i++) {
    const d = a.devices[i]!;
    const e = b.devices[i]!;
    // A handful of GPUs with nested readings: comparing their text is simple and cheap enough.
    if (d !== e && JSON.stringify(d) !== JSON.stringify(e)) return false;
  }
  for (let i = 0; i < a.processes.length; i++) {
    const p = a.processes[i]!;
    const q = b.processes[i]!;
    if (p.pid !== q.pid || p.gpuUuid !== q.gpuUuid || p.gpuIndex !== q.gpuIndex || p.usedBytes !== q.usedBytes ||
      p.smUtilPct !== q.smUtilPct || p.kind !== q.kind || p.name !== q.name || p.host !== q.host ||
      p.gpuInstanceId !== q.gpuInstanceId || p.computeInstanceId !== q.computeInstanceId) return false;
  }
  return true;
}
