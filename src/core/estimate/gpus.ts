/**
 * GPUs by name: memory as nvidia-smi reports it and the generation, which decides the cuBLAS workspace and
 * the default CUDA context size. Totals and driver-reserved sizes come from real nvidia-smi output
 * (test/fixtures/nvidia-smi and the shared fixture set); where reserved is unknown it is null.
 */
import { GpumemError } from '../errors.js';
import { MiB } from '../units.js';

export type GpuGeneration = 'pascal' | 'volta' | 'turing' | 'ampere' | 'ada' | 'hopper' | 'blackwell';

export interface GpuModel {
  id: string;
  /** Total framebuffer (nvidia-smi "Total"). */
  totalBytes: number;
  /** Driver-reserved part (nvidia-smi "Reserved", R510+); null when not known. */
  reservedBytes: number | null;
  generation: GpuGeneration;
}

export const GPU_CATALOGUE: readonly GpuModel[] = [
  { id: 'H100-80GB', totalBytes: 81559 * MiB, reservedBytes: 479 * MiB, generation: 'hopper' },
  { id: 'A100-80GB', totalBytes: 81920 * MiB, reservedBytes: null, generation: 'ampere' },
  { id: 'A100-40GB', totalBytes: 40960 * MiB, reservedBytes: null, generation: 'ampere' },
  { id: 'V100S-32GB', totalBytes: 32510 * MiB, reservedBytes: null, generation: 'volta' },
  { id: 'P100-16GB', totalBytes: 16384 * MiB, reservedBytes: 103 * MiB, generation: 'pascal' },
  { id: 'T4-16GB', totalBytes: 15360 * MiB, reservedBytes: 388 * MiB, generation: 'turing' },
  { id: 'RTX-A5000-24GB', totalBytes: 24564 * MiB, reservedBytes: 450 * MiB, generation: 'ampere' },
  { id: 'RTX-4000-ADA-20GB', totalBytes: 20475 * MiB, reservedBytes: 460 * MiB, generation: 'ada' },
  { id: 'RTX-PRO-6000-96GB', totalBytes: 97887 * MiB, reservedBytes: 637 * MiB, generation: 'blackwell' },
];

/**
 * cuBLAS workspace PyTorch allocates per handle and stream: `:4096:2:16:8` = 2×4 MiB + 8×16 KiB = 8.125 MiB,
 * 32 MiB on Hopper and Blackwell (ATen CublasHandlePool.cpp parseChosenWorkspaceSize; reference §4.5).
 */
export function cublasWorkspaceBytes(generation: GpuGeneration | null): number {
  return generation === 'hopper' || generation === 'blackwell' ? 32 * MiB : 2 * 4 * MiB + 8 * 16 * 1024;
}

/**
 * Default CUDA context + loaded kernels after a warm-up step. With lazy loading (default since CUDA 12.2)
 * reports run from 256 MiB bare (RTX 3090) to 0.62 GiB in training (RTX 5090); we take 512 MiB, and
 * 640 MiB on Hopper/Blackwell where more kernel images load (reference §4.4). Override with --context.
 */
export function defaultContextBytes(generation: GpuGeneration | null): number {
  return generation === 'hopper' || generation === 'blackwell' ? 640 * MiB : 512 * MiB;
}

/** Looks a GPU up by catalogue id, loosely ("h100", "H100-80GB", "a100-40gb"); undefined when unknown. */
export function findGpu(name: string): GpuModel | undefined {
  const key = name.toLowerCase().replace(/[\s_]/g, '-');
  return (
    GPU_CATALOGUE.find((g) => g.id.toLowerCase() === key) ?? GPU_CATALOGUE.find((g) => g.id.toLowerCase().startsWith(`${key}-`))
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
    hint: `use one of ${GPU_CATALOGUE.map((g) => g.id).join(', ')}, auto (the live GPU), or a size such as 24GiB`,
  });
}
