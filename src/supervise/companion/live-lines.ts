/**
 * What the companion adds to `gpumem run`'s own stderr lines while the program runs: the PyTorch split of
 * each GPU, OOMs at the instant they happen (with the snapshot written), rising allocator retries and
 * companion failures. One line each, in the supervisor's `gpumem: …` voice.
 */
import type { AllocatorAtOom } from '../../core/companion/oom-event.js';
import type { HelloMessage } from '../../core/companion/messages.js';
import type { PytorchGpuSummary } from '../../core/companion/summary.js';
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';

/** "GPU 0: tree 1.49 GiB = allocated … + unallocated … + non-PyTorch … (+ … other processes); retries 0, OOMs 0". */
export function splitLine(s: PytorchGpuSummary): string {
  const gpu = s.gpuIndex === null ? s.gpuUuid : `GPU ${s.gpuIndex}`;
  const other = s.otherProcessesBytes ? ` + ${formatBytes(s.otherProcessesBytes)} in tree processes without PyTorch statistics` : '';
  const counts = `retries ${s.numAllocRetries ?? 'n/a'}, OOMs ${s.numOoms ?? 'n/a'}`;
  return `${gpu}: tree ${formatBytes(s.treeBytes)} = allocated ${formatBytes(s.allocatedBytes)} + reserved-unallocated ` +
    `${formatBytes(s.unallocatedBytes)} + non-PyTorch ${formatBytes(s.nonPytorchBytes)}${other} (PyTorch reserved ${formatBytes(s.reservedBytes)}); ${counts}`;
}

/**
 * The companion announcing itself for one Python process. Without CUDA it says so and why, and claims no
 * statistics rate or memory fraction, since neither can take effect.
 */
export function helloLine(m: HelloMessage): string {
  const problem = m.cuda?.problem ?? null;
  if (problem !== null) {
    const unapplied = m.config.memoryFraction !== null ? `; memory fraction ${m.config.memoryFraction} not applied` : '';
    return `companion: pid ${m.pid} runs torch ${printable(m.torchVersion)} with no CUDA device: ${printable(problem)}; no PyTorch GPU statistics${unapplied}`;
  }
  const extras = [
    m.config.snapshotDir ? 'snapshot on OOM' : null,
    m.config.memoryFraction !== null ? `memory fraction ${m.config.memoryFraction}` : null,
  ].filter((x) => x !== null);
  return `companion: pid ${m.pid} runs torch ${printable(m.torchVersion)}; PyTorch statistics at ${m.config.rateHz ?? '?'} Hz${extras.length ? `, ${extras.join(', ')}` : ''}`;
}

/** A process that ended without ever having CUDA, and torch's likely reason. */
export function noCudaLine(pid: number, problem: string): string {
  return `companion: pid ${pid} ended without a CUDA device: ${printable(problem)}`;
}

/** A feature of the companion that failed in one process; the program itself runs on. */
export function errorLine(pid: number, what: string, message: string): string {
  return `companion: pid ${pid}: ${printable(what)} failed (${printable(message)}); the program runs on without it`;
}

/** An OOM as the allocator saw it, with the snapshot hint when one was written. */
export function oomLine(at: AllocatorAtOom, gpuIndex: number | null, snapshotError: string | null): string {
  const where = `cuda:${at.device}${gpuIndex === null ? '' : ` (GPU ${gpuIndex})`}`;
  const sizes = at.source === 'observer'
    ? `tried to allocate ${formatBytes(at.requestedBytes)} with ${formatBytes(at.allocatedBytes)} allocated, ${formatBytes(at.reservedBytes)} reserved ` +
      `(${formatBytes(at.unallocatedBytes)} unallocated), ${formatBytes(at.deviceFreeBytes)} free of ${formatBytes(at.deviceLimitBytes)}`
    : 'seen from the num_ooms counter (this torch has no OOM observer: no sizes)';
  const path = printable(at.snapshotPath);
  const snapshot = at.snapshotPath ? `; snapshot ${path} (gpumem snapshot ${path})` : snapshotError ? `; no snapshot: ${printable(snapshotError)}` : '';
  return `OOM in pid ${at.pid} on ${where}: ${sizes}${snapshot}`;
}

/** Retries rising: the allocator flushed its cache to satisfy an allocation. */
export function retriesLine(pid: number, device: number, retries: number): string {
  return `warning: pid ${pid} cuda:${device}: PyTorch allocator retries rose to ${retries} (it had to free its cache to satisfy an allocation — a warning sign before an OOM)`;
}
