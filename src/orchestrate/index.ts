/**
 * orchestrate/: work that combines sources, store and supervise for the commands above it: the live
 * sampler that watch, serve and /metrics share, diagnosis windows, the fit loop and the traced estimate.
 * Imports core/, sources/, store/ and supervise/; cli/ and server/ only call it.
 */
export { RingBuffer } from './ring-buffer.js';
export { ThinnedHistory, thinnedToPeriod, type SampleHistory, type ThinningOptions } from './thinned-history.js';
export { LiveSampler, type LiveSamplerOptions, type SampleListener } from './live-sampler.js';
export { collectWindow, diagnoseWindow, detectPidNamespace, readAncestors, type CollectOptions, type Collected, type Diagnosed } from './diagnosis-window.js';
export { runFitLoop, type FitLoopOptions } from './fit-loop.js';
export { analyseSnapshot, snapshotAnalysisJson, toJsonText, type SnapshotAnalysis, type SnapshotAnalysisOptions } from './snapshot-analysis.js';
export { estimateTraced, type TracedEstimate, type TracedEstimateOptions } from './traced-estimate.js';
