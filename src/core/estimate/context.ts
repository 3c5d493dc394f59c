/**
 * The CUDA context by CUDA version. Before CUDA 11.7 every kernel of every loaded library was put on the GPU
 * when the context was created (eager module loading), which took over a GiB; from 11.7 CUDA can load kernels
 * when first used, and PyTorch turns that on for CUDA ≥ 11.7 from release 1.13 (pytorch/pytorch#86509, where
 * the same tensor cost 666,632,192 B of device memory eager and 287,047,680 B lazy). Public measurements of
 * the eager context right after the first CUDA tensor:
 * - 1343 MiB: Tesla V100-SXM2-16GB, driver 460.91.03 / CUDA 11.2, `torch.ones((1, 1)).to("cuda")` then NVML
 *   used memory (Hugging Face Transformers docs, "Efficient Training on a Single GPU", Jan 2022);
 * - 1687 MiB: RTX 3090, torch 1.8.2+cu111, `torch.Tensor(1).cuda()` (pytorch/pytorch#55277);
 * - "> 1000 MB" before CUDA 11.7 (a PyTorch maintainer in pytorch/pytorch#107667).
 */
import { GpumemError } from '../errors.js';
import { MiB } from '../units.js';

export type ModuleLoading = 'eager' | 'lazy';

/** The eager-loading context assumed (the V100 / CUDA 11.2 measurement above) and the span reported. */
export const EAGER_CONTEXT_BYTES = 1343 * MiB;
export const EAGER_CONTEXT_LOW_BYTES = 1000 * MiB;
export const EAGER_CONTEXT_HIGH_BYTES = 1687 * MiB;

/** CUDA's version as major and minor from text such as "11.2", "12.1" or "11.2 (driver 460.91.03)". */
export function parseCudaVersion(text: string): { major: number; minor: number } {
  const m = /^\s*(\d{1,2})\.(\d{1,2})(?:\.\d+)?(?:\s|$|\()/.exec(text);
  if (!m) {
    throw new GpumemError('BAD_OPTION_VALUE', `--cuda: "${text}" is not a CUDA version`, { hint: 'give major.minor, e.g. --cuda 11.2 or --cuda 12.4' });
  }
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/** Eager before CUDA 11.7 (no lazy loading existed), lazy from 11.7 (PyTorch's default since 1.13). */
export function moduleLoadingFor(cuda: { major: number; minor: number }): ModuleLoading {
  return cuda.major < 11 || (cuda.major === 11 && cuda.minor < 7) ? 'eager' : 'lazy';
}
