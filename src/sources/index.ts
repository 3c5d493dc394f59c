/** sources/: where GPU and host state come from (nvml, smi, replay, procfs). Imports core/ only. */
export type { GpuSource } from './source.js';
export type { NvmlFields } from './nvml/source.js';
export { openSource, type OpenSourceOptions, type SourceChoice } from './open.js';
export * from './procfs/index.js';
export { isReplaySource, openReplaySource, readRecording, RECORDING_FORMAT, RECORDING_VERSION, type Recording, type RecordingHeader, type RecordingHostInfo, type ReplaySource } from './replay/index.js';
export { openSmiSource, parseSmiXml, parseQueryGpuCsv, parseComputeAppsCsv, type SmiSourceOptions } from './smi/index.js';
export * from './files/index.js';
export { becomeChildSubreaper } from './nvml/index.js';
export { readSnapshotFile, readSnapshotBytes } from './snapshot-file.js';
