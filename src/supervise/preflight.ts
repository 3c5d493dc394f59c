/**
 * Pre-flight: before spawning, look at the chosen GPUs — free memory and the processes already there — and
 * refuse early when `--require-free` cannot be met, rather than letting the job fail half an hour in.
 */
import { GpumemError } from '../core/errors.js';
import { formatBytes, formatPercent } from '../core/units.js';
import type { Device, Sample } from '../core/types.js';
import type { PreflightGpu } from './report.js';

export type FreeRequirement = { bytes: number } | { pct: number };

/**
 * Reads `--require-free` text: a size ("20GiB", "512M", plain bytes) or a percentage of total ("30%").
 * Throws a usage error for anything else.
 */
export function parseFreeRequirement(text: string, parseSize: (t: string, what: string) => number): FreeRequirement {
  const pct = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
  if (pct) {
    const value = Number(pct[1]);
    if (value > 100) {
      throw new GpumemError('BAD_OPTION_VALUE', `--require-free: ${text} is more than 100%`, { hint: 'give a percentage up to 100%, or a size such as 20GiB' });
    }
    return { pct: value };
  }
  return { bytes: parseSize(text, '--require-free') };
}

/** Describes each device as the report's pre-flight entry. */
export function describePreflight(devices: readonly Device[], sample: Sample): PreflightGpu[] {
  return devices.map((d) => ({
    index: d.index, uuid: d.uuid as string, name: d.name,
    totalBytes: d.memory.totalBytes, freeBytes: d.memory.freeBytes, usedBytes: d.memory.usedBytes,
    otherProcesses: sample.processes
      .filter((p) => p.gpuUuid === d.uuid || (p.gpuUuid === null && p.gpuIndex === d.index))
      .map((p) => ({ pid: p.pid, usedBytes: p.usedBytes, name: p.host?.cmdline?.join(' ') ?? p.name })),
  }));
}

/**
 * Throws a FAILED error naming every GPU that has less free memory than required. A GPU whose free memory
 * cannot be read fails the check too: we cannot promise what we cannot see.
 */
export function checkFree(gpus: readonly PreflightGpu[], need: FreeRequirement | null): void {
  if (!need) return;
  const short: string[] = [];
  for (const g of gpus) {
    const required = 'bytes' in need ? need.bytes : g.totalBytes === null ? null : Math.ceil((g.totalBytes * need.pct) / 100);
    if (g.freeBytes === null || required === null) {
      short.push(`GPU ${g.index}: free memory unknown`);
    } else if (g.freeBytes < required) {
      const others = g.otherProcesses.length > 0
        ? `; held by ${g.otherProcesses.map((p) => `pid ${p.pid} (${formatBytes(p.usedBytes)})`).join(', ')}`
        : '';
      short.push(`GPU ${g.index}: ${formatBytes(g.freeBytes)} free < ${formatBytes(required)} required${others}`);
    }
  }
  if (short.length > 0) {
    const what = 'bytes' in need ? formatBytes(need.bytes) : formatPercent(need.pct);
    throw new GpumemError('PREFLIGHT_FAILED', `not enough free GPU memory (--require-free ${what}): ${short.join('; ')}`, {
      hint: 'free the GPU (gpumem kill --gpu N), choose another with --gpus auto, or lower --require-free',
    });
  }
}
