/**
 * The per-rank table of a distributed run's report: each rank's number, GPU, PyTorch peaks, NVML peak and the
 * part outside PyTorch, step time and data wait, and whether it ran out of memory (docs/distributed.md).
 */
import type { RankSummary } from '../../core/companion/ranks.js';
import { formatBytes } from '../../core/units.js';
import { printable } from '../../core/text.js';
import { table } from './style.js';

type Paint = (color: 'gray', text: string) => string;

const ms = (v: number | null): string => (v === null ? 'n/a' : `${v.toFixed(1)} ms`);
const num = (v: number | null): string => (v === null ? '?' : String(v));

function gpuCell(r: RankSummary): string {
  if (r.gpus.length === 0) return 'none seen';
  return r.gpus.map((g) => (g.gpuIndex === null ? printable(g.gpuUuid) : `GPU ${g.gpuIndex}`)).join(', ');
}

/** The table's lines (indented for the run report), or none when no process named a rank. */
export function renderRanks(ranks: readonly RankSummary[] | undefined, paint: Paint): string[] {
  if (!ranks || ranks.length === 0) return [];
  const world = ranks.find((r) => r.worldSize !== null)?.worldSize ?? null;
  const backend = ranks.find((r) => r.backend !== null)?.backend ?? null;
  const head = `  ranks (${ranks.length}${world !== null && world !== ranks.length ? ` of world size ${world}` : ''}${backend ? `, backend ${printable(backend)}` : ''}):`;
  const rows = ranks.map((r) => [
    num(r.rank), num(r.localRank), String(r.pid), gpuCell(r), formatBytes(r.peakAllocatedBytes), formatBytes(r.peakReservedBytes),
    formatBytes(r.peakProcessBytes), formatBytes(r.peakNonPytorchBytes), ms(r.meanStepMs), ms(r.meanDataWaitMs),
    r.firstOomTimeMs === null ? '' : 'OOM',
  ]);
  const laid = table([
    ['RANK', 'LOCAL', 'PID', 'GPU', 'PEAK ALLOC', 'PEAK RESERVED', 'NVML PEAK', 'NON-PYTORCH', 'STEP', 'DATA WAIT', ''], ...rows,
  ], ['right', 'right', 'right', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'left']);
  return [head, ...laid.map((l, i) => (i === 0 ? paint('gray', `    ${l}`) : `    ${l}`).trimEnd())];
}
