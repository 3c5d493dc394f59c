/** Whether a new sample would change what the live view shows, decided without building anything. */
import type { GpuProcess, HostFacts, Sample } from '../types.js';

/** Host facts equal in what the analysis reads (CPU % and RSS are only shown, never analysed). */
function sameHost(a: HostFacts | null, b: HostFacts | null): boolean {
  // A live enricher hands back the very same facts object while nothing in it changed.
  if (a === b) return true;
  if (a === null || b === null) return false;
  return a.visible === b.visible && a.startTicks === b.startTicks && a.state === b.state && a.ppid === b.ppid && a.uid === b.uid;
}

function sameProcess(a: GpuProcess, b: GpuProcess): boolean {
  return a.pid === b.pid && a.gpuIndex === b.gpuIndex && a.gpuUuid === b.gpuUuid && a.usedBytes === b.usedBytes
    && a.smUtilPct === b.smUtilPct && sameHost(a.host, b.host);
}

/**
 * What a new sample changes for the live view: `changed` when a device or process row differs in what the
 * one-sample accounting reads (memory, status; per row pid, GPU, memory, state, parent, start): views, trees
 * and bars are built again; `numbers` when only numbers the view draws straight from the sample moved
 * (a GPU's utilisation, temperature, power; a row's SM share): a redraw, and the findings refresh at the
 * pace of a change, but nothing is rebuilt; `shown` when only the CPU % or RSS of a pid in `shownPids` moved
 * (a redraw, no analysis); `same` otherwise. Times and ages are not compared: the view refreshes those on
 * its own.
 */
export function compareSamples(previous: Sample, next: Sample, shownPids: ReadonlySet<number>): 'same' | 'shown' | 'numbers' | 'changed' {
  if (!sameSampleNumbers(previous, next)) return sameSampleLayout(previous, next) ? 'numbers' : 'changed';
  if (previous.processes === next.processes) return 'same';
  for (let i = 0; i < next.processes.length; i++) {
    const a = previous.processes[i]!.host;
    const b = next.processes[i]!.host;
    if (a !== b && shownPids.has(next.processes[i]!.pid) && (a?.cpuPct !== b?.cpuPct || a?.rssBytes !== b?.rssBytes)) return 'shown';
  }
  return 'same';
}

/**
 * True when `next` equals `previous` in everything the one-sample accounting of the live view reads: every
 * device's index, status and memory; every row's pid, GPU, memory and host facts (sameHost). Utilisation,
 * temperature, power and SM shares may differ.
 */
export function sameSampleLayout(previous: Sample, next: Sample): boolean {
  if (previous.devices.length !== next.devices.length || previous.processes.length !== next.processes.length) return false;
  for (let i = 0; i < next.devices.length; i++) {
    const a = previous.devices[i]!;
    const b = next.devices[i]!;
    if (a !== b && (a.index !== b.index || a.status !== b.status || a.memory.usedBytes !== b.memory.usedBytes || a.memory.reservedBytes !== b.memory.reservedBytes
      || a.memory.totalBytes !== b.memory.totalBytes)) return false;
  }
  for (let i = 0; i < next.processes.length; i++) {
    const a = previous.processes[i]!;
    const b = next.processes[i]!;
    if (a !== b && (a.pid !== b.pid || a.gpuIndex !== b.gpuIndex || a.gpuUuid !== b.gpuUuid || a.usedBytes !== b.usedBytes || !sameHost(a.host, b.host))) return false;
  }
  return true;
}

/** True when `next` equals `previous` in every number the analysis reads (see compareSamples). */
export function sameSampleNumbers(previous: Sample, next: Sample): boolean {
  // A live source hands out the very arrays of the previous sample when nothing in them moved.
  if (previous.devices === next.devices && previous.processes === next.processes) return true;
  if (previous.devices.length !== next.devices.length || previous.processes.length !== next.processes.length) return false;
  for (let i = 0; i < next.devices.length; i++) {
    const a = previous.devices[i]!;
    const b = next.devices[i]!;
    if (a.index !== b.index || a.status !== b.status || a.memory.usedBytes !== b.memory.usedBytes || a.memory.reservedBytes !== b.memory.reservedBytes
      || a.memory.totalBytes !== b.memory.totalBytes || a.utilization.gpuPct !== b.utilization.gpuPct || a.temperatureC !== b.temperatureC
      || a.powerDrawMw !== b.powerDrawMw) return false;
  }
  for (let i = 0; i < next.processes.length; i++) if (!sameProcess(previous.processes[i]!, next.processes[i]!)) return false;
  return true;
}
