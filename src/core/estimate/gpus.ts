/**
 * GPUs by name: memory as nvidia-smi reports it and the generation, which decides the cuBLAS workspace and
 * the default CUDA context size. Totals and driver-reserved sizes come from real nvidia-smi output
 * (the table and its sources are in gpu-table.ts); where reserved is unknown it is null.
 */
import { GpumemError } from '../errors.js';
import { MiB } from '../units.js';
import { GPU_TABLE } from './gpu-table.js';

export type GpuGeneration = 'pascal' | 'volta' | 'turing' | 'ampere' | 'ada' | 'hopper' | 'blackwell';

export interface GpuModel {
  id: string;
  /** Total framebuffer (nvidia-smi "Total"). */
  totalBytes: number;
  /** Driver-reserved part (nvidia-smi "Reserved", R510+); null when not known. */
  reservedBytes: number | null;
  generation: GpuGeneration;
  /** True when totalBytes was read from a real nvidia-smi output, false for a marketing size (an upper bound). */
  measured: boolean;
  /** Where the figure comes from (a fixture file or a public nvidia-smi printout). */
  source: string;
}

/** Every GPU `--gpu` knows, in bytes; the figures and their sources are in gpu-table.ts. */
export const GPU_CATALOGUE: readonly GpuModel[] = GPU_TABLE.map((r) => ({
  id: r.id,
  totalBytes: r.totalMiB * MiB,
  reservedBytes: r.reservedMiB === null ? null : r.reservedMiB * MiB,
  generation: r.generation,
  measured: r.measured,
  source: r.source,
}));

/**
 * cuBLAS workspace PyTorch allocates per handle and stream: `:4096:2:16:8` = 2×4 MiB + 8×16 KiB = 8.125 MiB,
 * 32 MiB on Hopper and Blackwell (ATen CublasHandlePool.cpp parseChosenWorkspaceSize; reference §4.5).
 */
export function cublasWorkspaceBytes(generation: GpuGeneration | null): number {
  return generation === 'hopper' || generation === 'blackwell' ? 32 * MiB : 2 * 4 * MiB + 8 * 16 * 1024;
}

/** A CUDA context size, whether it was measured on that generation and CUDA version, and where it comes from. */
export interface ContextFigure {
  bytes: number;
  measured: boolean;
  source: string;
}

/** Measured: the median at the end of 17 runs (14 configs and 3 half batches) of bench/gpu/accuracy_model.py. */
export const H100_CUDA13_CONTEXT_BYTES = 758 * MiB;
const H100_SOURCE = 'measured at the end of 17 training runs on an H100 80GB HBM3, driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130 ' +
  '(median; 742–762 MiB as cuBLAS/cuDNN kernels load, 610 MiB right after CUDA init): bench/results/2026-11-27-h100-80gb/estimate-accuracy';

/**
 * Default CUDA context + kernels loaded by the end of a training step, with lazy module loading (CUDA ≥ 11.7).
 * Hopper is measured (CUDA 13.0; CUDA 12 assumed the same, not measured). The rest are assumptions from public
 * reports, which run from 256 MiB bare (RTX 3090) to 0.62 GiB in training (RTX 5090): 640 MiB on Blackwell,
 * 512 MiB elsewhere (reference §4.4). `cuda` is --cuda when given. Override with --context.
 */
export function lazyContext(generation: GpuGeneration | null, cuda: { major: number; minor: number } | null = null): ContextFigure {
  if (generation === 'hopper') {
    if (cuda === null || cuda.major >= 13) return { bytes: H100_CUDA13_CONTEXT_BYTES, measured: true, source: H100_SOURCE };
    return { bytes: H100_CUDA13_CONTEXT_BYTES, measured: false, source: `assumed: the Hopper figure for CUDA 13.0, not measured on CUDA ${cuda.major}.${cuda.minor}` };
  }
  if (generation === 'blackwell') return { bytes: 640 * MiB, measured: false, source: 'assumed: public reports reach 0.62 GiB in training on an RTX 5090' };
  return { bytes: 512 * MiB, measured: false, source: 'assumed: public reports run from 256 MiB bare (RTX 3090) to 0.62 GiB in training' };
}

/** The default context's bytes for a generation (see lazyContext). */
export function defaultContextBytes(generation: GpuGeneration | null): number {
  return lazyContext(generation).bytes;
}

/**
 * Looks a GPU up by table id, loosely: case and spaces do not matter, the size may be left out ("h100" is the
 * first H100 row, H100-80GB) and so may the "RTX-"/"GTX-" prefix ("4090", "a6000"); undefined when unknown.
 */
export function findGpu(name: string): GpuModel | undefined {
  const key = name.trim().toLowerCase().replace(/[\s_]+/g, '-');
  if (key === '') return undefined;
  const ids = (g: GpuModel): string[] => {
    const id = g.id.toLowerCase();
    return [id, id.replace(/^(rtx|gtx)-/, '')];
  };
  return (
    GPU_CATALOGUE.find((g) => ids(g).includes(key)) ?? GPU_CATALOGUE.find((g) => ids(g).some((id) => id.startsWith(`${key}-`)))
  );
}

/** Generation from a device name as NVML reports it ("NVIDIA H100 80GB HBM3" → hopper); null if unknown. */
export function generationFromName(deviceName: string): GpuGeneration | null {
  const n = deviceName.toUpperCase();
  const rules: Array<[RegExp, GpuGeneration]> = [
    [/\b(B100|B200|GB200|RTX PRO \d+ BLACKWELL|RTX 50\d\d)\b|BLACKWELL/, 'blackwell'],
    [/\b(H100|H200|H800|GH200)\b/, 'hopper'],
    [/\bADA\b|\bL4\b|\bL40S?\b|RTX 40\d\d/, 'ada'],
    [/\b(A100|A800|A10G?|A30|A40|A16|A2)\b|RTX A\d{4}|RTX 30\d\d/, 'ampere'],
    [/\bT4\b|RTX 20\d\d|QUADRO RTX|TITAN RTX/, 'turing'],
    [/\bV100S?\b|TITAN V/, 'volta'],
    [/\bP100\b|\bP40\b|\bP4\b|GTX 10\d\d/, 'pascal'],
  ];
  for (const [re, gen] of rules) if (re.test(n)) return gen;
  return null;
}

/** Error for a `--gpu` value that is neither a known GPU, `auto`, nor a size. */
export function unknownGpu(value: string): GpumemError {
  return new GpumemError('BAD_OPTION_VALUE', `--gpu: "${value}" is not a known GPU or a size`, {
    hint: `use a GPU name such as H100-80GB, A100-40GB, RTX-4090-24GB or T4-16GB (all ${GPU_CATALOGUE.length} in docs/estimate.md), auto (the live GPU), or a size such as 24GiB`,
  });
}
