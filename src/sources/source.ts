import type { Sample } from '../core/types.js';

/**
 * Anything that can produce samples of GPU state: NVML, nvidia-smi, a recording. One contract suite
 * (test/sources/contract.ts) runs against every implementation.
 */
export interface GpuSource {
  readonly kind: Sample['source']['kind'];
  /** Reads all devices and their processes now (a recording: the next sample in order). */
  readSample(): Promise<Sample>;
  /** Releases the session (NVML shutdown, file handles). Safe to call twice. */
  close(): void;
}
