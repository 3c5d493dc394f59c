/** The run history (SQLite): open, migrate, write and read runs and pipelines. */
export { openHistory, defaultDbPath, type Db } from './open.js';
export { SCHEMA_VERSION as HISTORY_SCHEMA_VERSION } from './migrations.js';
export { beginRun, completeRun, listRuns, getRun, beginPipeline, completePipeline, listPipelines, historySummary, type RunRow, type PipelineRow, type StageCheckVerdict, type HistoryReport, type HistoryAttempt } from './history.js';
