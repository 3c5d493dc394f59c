/** core/estimate: training-memory prediction from safetensors headers, configs or a parameter count. */
export * from './dtypes.js';
export * from './safetensors.js';
export * from './tensors.js';
export * from './architectures.js';
export * from './setup.js';
export * from './allocator.js';
export * from './model-states.js';
export * from './activations.js';
export * from './gpus.js';
export * from './estimate.js';
export * from './batch.js';
export * from './stages.js';
export * from './params.js';
export * from './report.js';
export * from './trace.js';
export * from './replay.js';
export * from './trace-batch.js';
