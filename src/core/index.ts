/** core/: types, units and all pure analysis. No node:* imports, no clock, no environment. */
export * from './errors.js';
export * from './units.js';
export * from './types.js';
