import type { Sample } from '../core/types.js';

/**
 * Anything that can produce samples of GPU state: NVML, nvidia-smi, a recording. One contract suite
 * (test/sources/contract.ts) runs against every implementation.
 */
export interface GpuSource {
  readonly kind: Sample['source']['kind'];
  /**
   * Reads all devices and their processes now (a recording: the next sample in order). A sample is never
   * changed once handed out: a later one may share its objects (a device, a row, a list that read the same),
   * and consumers (a recording's delta, a live view's patched analysis) tell unchanged parts by identity.
   */
  readSample(): Promise<Sample>;
  /**
   * Total energy per device index now, for a source whose samples leave it out (NVML with `energy: false`):
   * /metrics reads it at scrape time. Absent where the source cannot read it apart from a sample.
   */
  readTotalEnergyMj?(): Map<number, number | null>;
  /** Releases the session (NVML shutdown, file handles). Safe to call twice. */
  close(): void;
}
