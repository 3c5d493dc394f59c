/** core/fit: the batch-size fit planner (pure; the runner that measures real commands lives in supervise/). */
export * from './planner.js';
export * from './report.js';
