/**
 * Memory held by other processes on the same GPU, as the message's NVML lines name them, cross-checked
 * against the live process list when gpumem runs on the machine. Also the signature of CUDA contexts
 * created on the wrong device: several processes holding the same small amount.
 */
import { b, pct, type CauseRule } from './helpers.js';
import type { OomContext, OomEvent } from '../types.js';

function liveNote(pid: number, context: OomContext): string {
  if (!context.liveChecked) return '';
  const live = context.liveProcesses?.find((p) => p.pid === pid);
  if (!live) return ' (no longer on the GPU)';
  if (live.state === 'Z') return ' (a zombie still holding memory)';
  const who = live.user ? `, user ${live.user}` : '';
  const cmd = live.cmdline && live.cmdline.length > 0 ? `, ${live.cmdline.join(' ').slice(0, 60)}` : '';
  return ` (still running${who}${cmd}, ${b(live.usedBytes === null ? null : BigInt(live.usedBytes))} now)`;
}

/** The sum of other processes' memory, when the message lists any with a size. */
function othersTotal(event: OomEvent): bigint {
  return event.otherProcesses.reduce((sum, p) => sum + (p.bytes ?? 0n), 0n);
}

export const otherProcesses: CauseRule = (event, context) => {
  const others = event.otherProcesses.filter((p) => p.bytes !== null && p.bytes > 0n);
  if (others.length === 0) return null;
  const total = othersTotal(event);
  const ownPytorch = (event.allocatedByPytorchBytes ?? 0n) + (event.reservedUnallocatedBytes ?? 0n);
  // In a container NVML reports host pids, so the process itself shows up as "Process P" with no "this process" line.
  const single = others[0];
  if (event.processInUseBytes === null && others.length === 1 && single && ownPytorch > 0n && (single.bytes ?? 0n) >= ownPytorch) {
    return {
      id: 'container-self',
      score: 20,
      title: 'The one process listed is probably this process itself (container pid)',
      evidence: { pid: single.pid, bytes: single.bytes, pytorchHeldBytes: ownPytorch },
      detail: `Process ${single.pid ?? '(pid not shown)'} holds ${b(single.bytes)}, at least the ${b(ownPytorch)} PyTorch holds here, and no "this process" line was printed: inside a container NVML shows the host pid of the process itself.`,
      fix: 'Treat it as this process: the other causes listed apply to your own memory use.',
    };
  }
  const req = event.requestedBytes;
  const significant = (req !== null && total >= req) || (event.totalBytes !== null && total * 10n >= event.totalBytes);
  if (!significant) return null;
  const list = others.map((p) => (p.pid === null ? `pid not shown: ${b(p.bytes)}` : `${p.pid}: ${b(p.bytes)}${liveNote(p.pid, context)}`)).join('; ');
  const pids = others.flatMap((p) => (p.pid === null ? [] : [p.pid])).join(' ');
  const kill = pids === ''
    ? 'The pasted message has no pids: find the processes with `gpumem status` and, if they are leftovers of earlier runs, end them with `gpumem kill PID` (it checks ownership and that they still hold the GPU)'
    : `If they are leftovers of earlier runs, end them with \`gpumem kill ${pids}\` (it checks ownership and that they still hold the GPU)`;
  return {
    id: 'other-processes',
    score: req !== null && total >= req ? 80 : 50,
    title: `Other processes hold ${b(total)} on this GPU`,
    evidence: { otherProcessesBytes: total, count: others.length, requestedBytes: req, totalBytes: event.totalBytes },
    detail: `${others.length} other process(es) hold ${b(total)}${event.totalBytes !== null ? ` (${pct(total, event.totalBytes)} of ${b(event.totalBytes)})` : ''}${req !== null && total >= req ? `, more than the ${b(req)} requested` : ''}: ${list}.`,
    fix: `${kill}; otherwise run on a GPU they do not use (\`gpumem status\` shows free ones).`,
  };
};

export const strayContexts: CauseRule = (event) => {
  const sized = event.otherProcesses.filter((p) => p.bytes !== null && p.bytes > 0n);
  if (sized.length < 2) return null;
  const sizes = sized.map((p) => p.bytes as bigint);
  const min = sizes.reduce((a, v) => (v < a ? v : a));
  const max = sizes.reduce((a, v) => (v > a ? v : a));
  // Equal small amounts (within 2%) are CUDA contexts, not real work: processes that touched this GPU by accident.
  if (max > 3n << 30n || (max - min) * 50n > max) return null;
  return {
    id: 'stray-contexts',
    score: 70,
    title: `${sized.length} processes each hold about ${b(max)}: CUDA contexts on the wrong GPU`,
    evidence: { processes: sized.length, eachBytes: max, totalBytes: sizes.reduce((a, v) => a + v, 0n) },
    detail: `${sized.length} processes hold between ${b(min)} and ${b(max)} each on GPU ${event.gpuIndex ?? '?'}: the size of a bare CUDA context, the mark of ranks or DataLoader workers that initialised CUDA on this device.`,
    fix: 'Call torch.cuda.set_device(local_rank) before any CUDA work in each rank, load checkpoints with map_location="cpu", and keep CUDA out of DataLoader workers (no .cuda() in Dataset code).',
  };
};
