/**
 * The `--gpu` table: each GPU's total memory exactly as nvidia-smi prints it ("Total", MiB), the
 * driver-reserved part where nvidia-smi shows it, and where the figure comes from. A fixture path names a
 * real nvidia-smi output in the shared fixture set; an issue names a public nvidia-smi printout. Where no
 * printout was found the total is the board's marketing size in GiB of memory chips and `measured` is false:
 * the driver reports less than that (a few hundred MiB), so the estimate calls the figure an upper bound.
 */
import type { GpuGeneration } from './gpus.js';

export interface GpuTableRow {
  id: string;
  /** nvidia-smi "Total" in MiB (or the marketing size in MiB when `measured` is false). */
  totalMiB: number;
  /** nvidia-smi "Reserved" in MiB (drivers R510+); null when the source does not show it. */
  reservedMiB: number | null;
  generation: GpuGeneration;
  /** True when totalMiB was read from a real nvidia-smi output. */
  measured: boolean;
  /** Where the figure comes from. */
  source: string;
}

const FIX = 'fixture nvidia-smi/';

export const GPU_TABLE: readonly GpuTableRow[] = [
  { id: 'H100-80GB', totalMiB: 81559, reservedMiB: 479, generation: 'hopper', measured: true, source: `${FIX}h100-80gb-hbm3-driver-590.48.01-query-gpu.csv` },
  { id: 'H100-NVL-94GB', totalMiB: 95830, reservedMiB: null, generation: 'hopper', measured: true, source: 'NVIDIA/gpu-admin-tools#4 (nvidia-smi, driver 535.183.01)' },
  { id: 'H200-141GB', totalMiB: 143771, reservedMiB: 614, generation: 'hopper', measured: true, source: `${FIX}h200-driver-590.48.01-query-gpu.csv` },
  { id: 'B200-180GB', totalMiB: 183359, reservedMiB: null, generation: 'blackwell', measured: true, source: 'NVIDIA/TensorRT-LLM#10278 (nvidia-smi, driver 580.95.05)' },
  { id: 'A100-80GB', totalMiB: 81920, reservedMiB: null, generation: 'ampere', measured: true, source: 'modal-labs/modal-client#2797 (nvidia-smi totals); driver 450 printed 81252 (keyu-tian/SparK#8)' },
  { id: 'A100-40GB', totalMiB: 40960, reservedMiB: null, generation: 'ampere', measured: true, source: 'bottlerocket-os/bottlerocket-core-kit#834 (nvidia-smi, driver 580.126.09); drivers 470 and older printed 40536' },
  { id: 'A10-24GB', totalMiB: 23028, reservedMiB: null, generation: 'ampere', measured: true, source: 'modal-labs/modal-client#2797; NVML total 24146608128 B in mayooot/detect-gpu#3' },
  { id: 'A10G-24GB', totalMiB: 23028, reservedMiB: 435, generation: 'ampere', measured: true, source: `${FIX}a10g-procs-driver-515.105.01.xml` },
  { id: 'L4-24GB', totalMiB: 23034, reservedMiB: null, generation: 'ada', measured: true, source: 'modal-labs/modal-client#2797 (nvidia-smi totals)' },
  { id: 'L40S-48GB', totalMiB: 46068, reservedMiB: 609, generation: 'ada', measured: true, source: `${FIX}l40s-driver-595.80-query-gpu.csv` },
  { id: 'T4-16GB', totalMiB: 15360, reservedMiB: 388, generation: 'turing', measured: true, source: `${FIX}tesla-t4-procs-driver-515.105.01.xml` },
  { id: 'V100-16GB', totalMiB: 16160, reservedMiB: null, generation: 'volta', measured: true, source: 'SXM2; 4paradigm/k8s-vgpu-scheduler#7 (nvidia-smi, driver 440.64.00)' },
  { id: 'V100-32GB', totalMiB: 32480, reservedMiB: null, generation: 'volta', measured: true, source: 'SXM2; godweiyang/GrabGPU#5 (nvidia-smi, driver 418.116.00)' },
  { id: 'V100S-32GB', totalMiB: 32510, reservedMiB: null, generation: 'volta', measured: true, source: `${FIX}v100s-pcie-32gb-x8-procs-driver-460.73.01.xml` },
  { id: 'P100-16GB', totalMiB: 16384, reservedMiB: 103, generation: 'pascal', measured: true, source: `${FIX}tesla-p100-pcie-16gb-driver-510.47.03-query-gpu.csv (reserved + used + free = 16383)` },
  { id: 'RTX-PRO-6000-96GB', totalMiB: 97887, reservedMiB: 637, generation: 'blackwell', measured: true, source: `${FIX}rtx-pro-6000-blackwell-maxq-procs-driver-590.44.01.xml` },
  { id: 'RTX-5090-32GB', totalMiB: 32607, reservedMiB: null, generation: 'blackwell', measured: true, source: 'noonghunna/club-3090#1261 (nvidia-smi, driver 610.57.04)' },
  { id: 'RTX-4090-24GB', totalMiB: 24564, reservedMiB: null, generation: 'ada', measured: true, source: 'RLinf/RLinf#255 (nvidia-smi, driver 550.163.01)' },
  { id: 'RTX-4060-8GB', totalMiB: 8192, reservedMiB: null, generation: 'ada', measured: false, source: 'marketing size 8 GB; no nvidia-smi printout found' },
  { id: 'RTX-4000-ADA-20GB', totalMiB: 20475, reservedMiB: 460, generation: 'ada', measured: true, source: `${FIX}rtx-4000-sff-ada-procs-driver-595.84.xml` },
  { id: 'RTX-3090-24GB', totalMiB: 24576, reservedMiB: 316, generation: 'ampere', measured: true, source: `${FIX}rtx-3090-driver-525.147.05.xml` },
  { id: 'RTX-3060-12GB', totalMiB: 12288, reservedMiB: null, generation: 'ampere', measured: true, source: 'geerlingguy/raspberry-pi-pcie-devices#790 (nvidia-smi, driver 580.95.05)' },
  { id: 'RTX-2080-TI-11GB', totalMiB: 11264, reservedMiB: null, generation: 'turing', measured: false, source: 'marketing size 11 GB; no nvidia-smi printout found' },
  { id: 'GTX-1080-TI-11GB', totalMiB: 11264, reservedMiB: null, generation: 'pascal', measured: true, source: 'PromtEngineer/localGPT#14 (nvidia-smi, Windows WDDM, driver 531.14)' },
  { id: 'RTX-A6000-48GB', totalMiB: 49152, reservedMiB: null, generation: 'ampere', measured: false, source: 'marketing size 48 GB; no nvidia-smi printout found' },
  { id: 'RTX-A5000-24GB', totalMiB: 24564, reservedMiB: 450, generation: 'ampere', measured: true, source: `${FIX}rtx-a5000-x2-procs-driver-590.44.01.xml` },
  { id: 'RTX-A4000-16GB', totalMiB: 16384, reservedMiB: null, generation: 'ampere', measured: false, source: 'marketing size 16 GB; no nvidia-smi printout found' },
];
