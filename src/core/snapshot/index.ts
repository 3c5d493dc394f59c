/** core/snapshot: the data-only unpickler and the analyses of PyTorch memory snapshots. */
export * from './unpickle.js';
export * from './snapshot-reader.js';
export * from './model.js';
export * from './frames.js';
export * from './sites.js';
export * from './summary.js';
export * from './trace.js';
export * from './report.js';
export { opcodeName, UNSAFE_OPCODES } from './opcodes.js';
