/**
 * Findings about the ranks of one distributed job (docs/distributed.md): ranks sharing a GPU while others
 * were theirs to use (the forgotten `torch.cuda.set_device`), one rank holding far more than the rest (rank 0
 * evaluating, logging or checkpointing alone), the rank whose OOM ended the job, and NCCL's own buffers.
 */
import { formatBytes } from '../units.js';
import type { RunFinding } from '../run/utilization.js';
import { rankName, type RankSummary } from './ranks.js';

/**
 * A rank holds "far more" than the others when its peak is at least this multiple of the others' median.
 * Ranks of data-parallel training run the same step on equal shards, so their peaks agree within a few per
 * cent; a quarter more is work only that rank does. Relative on purpose: 2 GiB extra is noise on a 70 GiB
 * rank and the whole story on a 4 GiB one.
 */
export const RANK_IMBALANCE_RATIO = 1.25;

/**
 * NCCL ranks whose memory outside PyTorch exceeds this are told what NCCL keeps there: a CUDA context with
 * cuBLAS workspaces costs roughly 300–600 MiB on current drivers (THRESHOLDS.allocConfMinBytes says the same),
 * so a GiB or more outside PyTorch on an NCCL rank is mostly NCCL's channel buffers and its NVLS/collnet memory.
 */
export const NCCL_NON_PYTORCH_MIN_BYTES = 1024 * 1024 * 1024;

const SET_DEVICE = 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) before any CUDA work (and device_ids=[local_rank] for DDP)';

function gpuName(g: { gpuUuid: string; gpuIndex: number | null }): string {
  return g.gpuIndex === null ? g.gpuUuid : `GPU ${g.gpuIndex}`;
}

function names(ranks: readonly RankSummary[]): string {
  return ranks.map(rankName).join(', ');
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * Ranks on one GPU while the job had more GPUs than that: `gpusAvailable` is how many GPUs the ranks could
 * use (the GPUs chosen with --gpus, else the devices the ranks' torch saw), null when unknown — then two ranks
 * sharing a GPU may be meant (gloo ranks sharing one card), and nothing is said.
 */
export function sharedGpuFindings(ranks: readonly RankSummary[], gpusAvailable: number | null): RunFinding[] {
  if (ranks.length < 2 || gpusAvailable === null || gpusAvailable < 2) return [];
  const byGpu = new Map<string, { gpu: RankSummary['gpus'][number]; ranks: RankSummary[] }>();
  for (const r of ranks) {
    for (const g of r.gpus) {
      const entry = byGpu.get(g.gpuUuid) ?? { gpu: g, ranks: [] };
      entry.ranks.push(r);
      byGpu.set(g.gpuUuid, entry);
    }
  }
  const out: RunFinding[] = [];
  for (const { gpu, ranks: on } of byGpu.values()) {
    if (on.length < 2) continue;
    const all = on.length === ranks.length;
    out.push({
      id: 'ranks-share-gpu',
      gpuIndex: gpu.gpuIndex,
      title: all
        ? `every rank (${on.length}) runs on ${gpuName(gpu)} although ${gpusAvailable} GPUs were there for them: ${names(on)}`
        : `${on.length} ranks share ${gpuName(gpu)} although ${gpusAvailable} GPUs were there for them: ${names(on)}`,
      fix: `each rank must select its own GPU: call ${SET_DEVICE}; until then the ranks compete for one GPU's memory and the others sit idle`,
      details: { ranks: on.length, worldSize: ranks.length, gpusAvailable, allRanks: all },
    });
  }
  return out;
}

/** The rank whose peak is RANK_IMBALANCE_RATIO or more times the other ranks' median, if one is. */
export function imbalanceFinding(ranks: readonly RankSummary[]): RunFinding | null {
  // One measure for all: mixing PyTorch's reserved with NVML's totals would compare unlike numbers.
  const reserved = ranks.filter((r) => r.peakReservedBytes !== null).length >= 2;
  const measure = reserved ? 'PyTorch reserved' : 'NVML total';
  const bytesOf = (r: RankSummary): number | null => (reserved ? r.peakReservedBytes : r.peakProcessBytes);
  const usable = ranks.filter((r) => bytesOf(r) !== null);
  if (usable.length < 2) return null;
  const top = usable.reduce((a, b) => ((bytesOf(b) as number) > (bytesOf(a) as number) ? b : a));
  const others = usable.filter((r) => r !== top).map((r) => bytesOf(r) as number);
  const typical = median(others);
  const peak = bytesOf(top) as number;
  if (typical <= 0 || peak < typical * RANK_IMBALANCE_RATIO) return null;
  const ratio = peak / typical;
  const where = top.gpus[0] ? ` on ${gpuName(top.gpus[0])}` : '';
  return {
    id: 'rank-imbalance',
    gpuIndex: top.gpus[0]?.gpuIndex ?? null,
    title: `${rankName(top)} peaked at ${formatBytes(peak)}${where}, ${ratio.toFixed(2)}× the other ranks' ${formatBytes(typical)} (${measure}): it does work the others do not`,
    fix: `the largest rank decides what fits, so the other ranks waste ${formatBytes(peak - typical)} each of headroom. ` +
      `Usually rank 0 evaluates, logs or saves checkpoints alone: evaluate on every rank over its shard under torch.no_grad() and free the results, ` +
      `log detached scalars (.item() of a reduced value) rather than tensors, and build checkpoints from CPU copies ` +
      `(or torch.distributed.checkpoint, which writes each rank's part); then measure again with gpumem run`,
    details: { rank: top.rank, pid: top.pid, peakBytes: peak, othersMedianBytes: typical, ratio, threshold: RANK_IMBALANCE_RATIO, ranks: usable.length },
  };
}

/** The rank whose OOM came first, and how the other ranks ended after it. */
export function firstOomFinding(ranks: readonly RankSummary[]): RunFinding | null {
  const oomed = ranks.filter((r) => r.firstOomTimeMs !== null).sort((a, b) => (a.firstOomTimeMs as number) - (b.firstOomTimeMs as number));
  const first = oomed[0];
  if (!first || ranks.length < 2) return null;
  const others = ranks.filter((r) => r !== first).map((r) => {
    if (r.firstOomTimeMs !== null) return `${rankName(r)} ran out of memory too, ${r.firstOomTimeMs - (first.firstOomTimeMs as number)} ms later (the same step on equal shards fails on every rank)`;
    if (!r.ended) return `${rankName(r)} had no OOM of its own and was ended by a signal: the launcher stops the remaining ranks when one fails`;
    return `${rankName(r)} had no OOM of its own and exited by itself: a collective with the failed rank broke off`;
  });
  const gpu = first.gpus[0];
  return {
    id: 'rank-oom-first',
    gpuIndex: gpu?.gpuIndex ?? null,
    title: `${rankName(first)} ran out of memory first${gpu ? ` on ${gpuName(gpu)}` : ''}; ${others.join('; ')}`,
    fix: `read the OOM of ${rankName(first)} (its allocator numbers are in this report; the other ranks' errors are consequences). ` +
      'When only that rank ran out, it holds more than the others (see rank-imbalance); when all did, the per-rank batch is too large: ' +
      '`gpumem estimate` it, or lower it and raise gradient accumulation to keep the global batch',
    details: { rank: first.rank, pid: first.pid, ranksWithOom: oomed.length, ranks: ranks.length },
  };
}

/** NCCL ranks whose memory outside PyTorch exceeds NCCL_NON_PYTORCH_MIN_BYTES. */
export function ncclFinding(ranks: readonly RankSummary[]): RunFinding | null {
  const nccl = ranks.filter((r) => r.backend === 'nccl' && r.peakNonPytorchBytes !== null && r.peakNonPytorchBytes >= NCCL_NON_PYTORCH_MIN_BYTES);
  if (nccl.length === 0) return null;
  const bytes = nccl.map((r) => r.peakNonPytorchBytes as number);
  const low = Math.min(...bytes);
  const high = Math.max(...bytes);
  return {
    id: 'nccl-buffers',
    gpuIndex: nccl.length === 1 ? (nccl[0]?.gpus[0]?.gpuIndex ?? null) : null,
    title: `${nccl.length === ranks.length ? 'every NCCL rank' : names(nccl)} holds ${low === high ? formatBytes(low) : `${formatBytes(low)}–${formatBytes(high)}`} outside PyTorch: NCCL's own buffers, on top of the CUDA context`,
    fix: 'NCCL allocates per channel and per peer outside PyTorch\'s allocator (PyTorch cannot free it): NCCL_BUFFSIZE (default 4 MiB per channel), ' +
      'fewer channels with NCCL_MAX_NCHANNELS, and NCCL_NVLS_ENABLE=0 on NVSwitch systems (NVLink SHARP reserves the most) shrink it at some bandwidth cost; ' +
      'count it in the headroom each rank needs, and check the effect with gpumem run',
    details: { ranks: nccl.length, minBytes: low, maxBytes: high, threshold: NCCL_NON_PYTORCH_MIN_BYTES },
  };
}

/** Every rank finding, in the order reports list them. */
export function rankFindings(ranks: readonly RankSummary[], gpusAvailable: number | null): RunFinding[] {
  return [...sharedGpuFindings(ranks, gpusAvailable), imbalanceFinding(ranks), firstOomFinding(ranks), ncclFinding(ranks)]
    .filter((f): f is RunFinding => f !== null);
}
