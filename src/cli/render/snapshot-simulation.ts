/** Text for `gpumem snapshot --simulate / --what-if`: one block per device, the recorded settings first. */
import { formatBytes } from '../../core/units.js';
import type { DeviceSimulation, SimulationRun } from '../../core/allocator/simulate-snapshot.js';

function runLine(label: string, r: SimulationRun): string {
  const earlier = r.earlierOomCount > 0 ? `; ${r.earlierOomCount} earlier allocation(s) fail, the first at event ${r.firstOomEventIndex}` : '';
  const oom = r.oomAvoided === null ? earlier : r.oomAvoided ? `; the OOM request succeeds${r.oomSpareBytes !== null ? ` with ${formatBytes(r.oomSpareBytes)} to spare` : ''}` : `; the OOM still happens${earlier}`;
  return `  ${label.padEnd(36)} peak reserved ${formatBytes(r.peakReservedBytes)}, peak allocated ${formatBytes(r.peakAllocatedBytes)}, fragmentation at peak ${formatBytes(r.fragmentationAtPeakBytes)}, end ${formatBytes(r.endReservedBytes)} in ${r.endSegmentCount} segments${oom}`;
}

/** Renders the simulation section; `showMatch` adds how the recorded-settings replay compares with the snapshot. */
export function renderSimulationText(sims: readonly DeviceSimulation[], showMatch: boolean): string {
  if (sims.length === 0) return '\nAllocator simulation: no device has a trace to replay (record one with torch.cuda.memory._record_memory_history()).\n';
  const lines: string[] = [''];
  for (const s of sims) {
    const cover = s.actual.coversWholeRun ? 'the trace covers the whole run' : 'the trace starts mid-run; the state before it is taken from the snapshot';
    lines.push(`Allocator simulation, device ${s.device} (${cover}${s.capacityBytes !== null ? `; device memory for the allocator ${formatBytes(s.capacityBytes)}, from the OOM` : ''})`);
    lines.push(runLine('as recorded', s.actual));
    if (showMatch) {
      const m = s.actual.match;
      lines.push(`    matches the snapshot: ${m.addressMatches}/${m.addressChecks} allocations at the real address, ${m.identicalSegments}/${m.realSegmentCount} segments identical, reserved ${formatBytes(s.actual.endReservedBytes)} vs ${formatBytes(m.realEndReservedBytes)} real`);
    }
    for (const w of s.whatIf) lines.push(runLine(w.settings, w));
  }
  return `${lines.join('\n')}\n`;
}
