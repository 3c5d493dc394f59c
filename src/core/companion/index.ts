/** core/companion: the PyTorch companion's message format, its parser, the per-run state and the memory split. */
export * from './messages.js';
export { parseCompanionLine, createLineSplitter, MAX_LINE_CHARS } from './parse.js';
export {
  applyCompanionMessage,
  createCompanionState,
  uuidForOrdinal,
  type CompanionDeviceState,
  type CompanionProcessState,
  type CompanionState,
} from './state.js';
export { splitProcessMemory, splitProcesses, splitByGpu, type MemorySplit, type GpuSplit } from './split.js';
