/** sources/: where GPU and host state come from (nvml, smi, replay, procfs). Imports core/ only. */
export type { GpuSource } from './source.js';
