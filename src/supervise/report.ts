/** The run report's types live in core/run (pure values shared with the store and the renderers). */
export * from '../core/run/index.js';
