/** The gpumem library: the model, sources and analyses, for programs that want gpumem's numbers. */
export * from './core/index.js';
export * from './sources/index.js';
