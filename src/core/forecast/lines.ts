/** The OOM forecast in one line each, in the same words for `gpumem run`, its report readers and the docs. */
import { formatBytes, formatDuration } from '../units.js';
import { printable } from '../text.js';
import type { MemoryForecast } from './forecast.js';

/** "pid 123 cuda:0 (GPU 2)". */
export function forecastWhere(pid: number, f: MemoryForecast, gpuIndex: number | null): string {
  return `pid ${pid} cuda:${f.device}${gpuIndex === null ? '' : ` (GPU ${gpuIndex})`}`;
}

function eta(steps: number, meanStepMs: number | null): string {
  return meanStepMs === null ? '' : `, about ${formatDuration(steps * meanStepMs)}`;
}

/** "; what grows (steps 32 → 64): train.py:41 in main +512.00 MiB in 32 blocks, …", or "" when not known. */
export function whatGrows(f: MemoryForecast): string {
  const s = f.growth?.sites;
  if (!s || s.sites.length === 0) return '';
  const sites = s.sites.map((x) => `${printable(x.site)} +${formatBytes(x.bytes)} in ${x.blocks} block${x.blocks === 1 ? '' : 's'}`);
  return `; what grows (steps ${s.fromStep} → ${s.toStep}): ${sites.join(', ')}`;
}

/** What the forecast sees, or null when it sees neither growth nor periodic spikes (a flat run says nothing). */
export function forecastLine(where: string, f: MemoryForecast, meanStepMs: number | null = null): string | null {
  const parts: string[] = [];
  const g = f.growth;
  if (g) {
    const limit = g.oomAtStep === null || f.limitBytes === null
      ? ''
      : `; at this rate the step peak reaches the ${formatBytes(f.limitBytes)} available at step ${g.oomAtStep} (${g.stepsLeft} steps from now${eta(g.stepsLeft ?? 0, meanStepMs)})`;
    parts.push(`memory left behind grows ${formatBytes(g.bytesPerStep)} a step since step ${g.sinceStep} (${formatBytes(f.leftBytes)} at step ${f.step})${limit}${whatGrows(f)}`);
  }
  const s = f.spikes;
  if (s) {
    const room = s.headroomBytes === null || f.limitBytes === null ? '' : ` of ${formatBytes(f.limitBytes)} available (${s.headroomBytes >= 0 ? `${formatBytes(s.headroomBytes)} to spare` : `${formatBytes(-s.headroomBytes)} short`})`;
    parts.push(`a spike every ${s.everySteps} steps (${s.seen} seen, last at step ${s.lastStep}) peaks at ${formatBytes(s.peakBytes)}; the next, at step ${s.nextStep}, needs ${formatBytes(s.nextPeakBytes)}${room}`);
  }
  return parts.length === 0 ? null : `forecast: ${where}: ${parts.join('; ')}`;
}

/** One warning line per reason the forecast gives for an OOM ahead. */
export function forecastWarnings(where: string, f: MemoryForecast, meanStepMs: number | null = null): string[] {
  const out: string[] = [];
  const g = f.growth;
  if (f.warnings.includes('growth') && g && g.oomAtStep !== null && g.stepsLeft !== null) {
    out.push(`warning: OOM forecast: ${where} runs out of memory at step ${g.oomAtStep}, ${g.stepsLeft} steps from now${eta(g.stepsLeft, meanStepMs)}: ` +
      `each step leaves ${formatBytes(g.bytesPerStep)} more allocated (a tensor kept across steps, e.g. \`total += loss\` where \`loss.item()\` was meant)${whatGrows(f)}`);
  }
  const s = f.spikes;
  if (f.warnings.includes('spike') && s && s.failsAtStep !== null && s.failsAtPeakBytes !== null && f.limitBytes !== null) {
    const later = s.failsAtStep === s.nextStep ? '' : ` (the next, at step ${s.nextStep}, still fits; growth of ${formatBytes(f.growth?.bytesPerStep ?? 0)} a step makes this one too big)`;
    out.push(`warning: OOM forecast: ${where}: the spike due at step ${s.failsAtStep} (every ${s.everySteps} steps: an evaluation or a checkpoint) ` +
      `needs ${formatBytes(s.failsAtPeakBytes)}, ${formatBytes(f.limitBytes)} is available${later}`);
  }
  return out;
}
