/** forecast/: the OOM forecast from the training loop's per-step memory (docs/training-loop.md). */
export * from './history.js';
export * from './forecast.js';
export * from './lines.js';
export * from './findings.js';
