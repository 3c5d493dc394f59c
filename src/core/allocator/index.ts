/** core/allocator: a simulation of PyTorch's CUDA caching allocator, and replays of snapshot traces through it. */
export { AllocatorSim, type AllocatorSimOptions, type AllocatorSimStats, type SimSegment } from './sim.js';
export { parseAllocatorConf, defaultAllocatorSettings, settingsFromSnapshot, type AllocatorSettings } from './settings.js';
export { roundSize, allocationSize, MIN_BLOCK_BYTES, SMALL_SIZE_BYTES, SMALL_BUFFER_BYTES, LARGE_BUFFER_BYTES } from './sizes.js';
export { replayTrace, capacityAtOom, traceStartReserved, type ReplayOptions, type ReplayResult, type ReplayOom } from './replay.js';
export { simulateSnapshot, type DeviceSimulation, type SimulationRun, type SimulationMatch } from './simulate-snapshot.js';
export { answerOomSnapshot, unansweredSnapshot, OOM_WHAT_IF, type SnapshotOomAnswer, type OomSettingsAnswer } from './oom-answer.js';
