/**
 * Joins the companion's OOM captures to the OOM messages found in the child's output: each finding gets
 * the allocator's exact numbers at that instant (`allocator`), and its explanation is recomputed on them
 * instead of the printed, rounded sizes.
 */
import { allocatorAtOom, withAllocatorNumbers, type AllocatorAtOom } from '../../core/companion/oom-event.js';
import type { CompanionState } from '../../core/companion/state.js';
import type { OomMessage } from '../../core/companion/messages.js';
import { explainOom } from '../../core/oom/explain.js';
import type { OomContext } from '../../core/oom/types.js';
import type { OomFinding } from '../../core/run/report.js';

function requestedOf(f: OomFinding): number | null {
  const v = f.event.requestedBytes;
  return v === null ? null : Number(v);
}

// The printed request is rounded to two decimals of its unit: within 0.5 % (or 10 KiB) it is the same one.
function sameRequest(printed: number | null, exact: number | null): boolean {
  if (printed === null || exact === null) return true;
  return Math.abs(printed - exact) <= Math.max(10 * 1024, exact * 0.005);
}

function relink(finding: OomFinding, at: AllocatorAtOom, memoryFraction: number | null, context: OomContext): void {
  finding.allocator = at;
  const exact = withAllocatorNumbers(finding.event, at, memoryFraction);
  finding.event = exact;
  finding.causes = explainOom(exact, context);
}

/**
 * Attaches each capture (in the order they happened) to the first not yet linked finding with the same
 * request size (printed rounding allowed). Counter captures (torch without an observer) carry no sizes
 * and link in order. Returns the captures that matched no printed message (caught and not printed).
 */
export function linkCompanionOoms(findings: OomFinding[], state: CompanionState, context: OomContext): AllocatorAtOom[] {
  const captures: Array<{ message: OomMessage; uuid: string | null; fraction: number | null }> = [];
  for (const p of state.values()) {
    for (const m of p.ooms) {
      captures.push({ message: m, uuid: p.devices.get(m.device)?.gpuUuid ?? null, fraction: p.hello?.config.memoryFraction ?? null });
    }
  }
  captures.sort((a, b) => a.message.timeMs - b.message.timeMs);
  const unmatched: AllocatorAtOom[] = [];
  for (const c of captures) {
    const at = allocatorAtOom(c.message, c.uuid);
    const finding = findings.find((f) => !f.allocator && sameRequest(requestedOf(f), at.requestedBytes));
    if (finding) relink(finding, at, c.fraction, context);
    else unmatched.push(at);
  }
  return unmatched;
}
