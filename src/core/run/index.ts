/** core/run: the report of a supervised run as a value, and its JSON form. */
export * from './report.js';
export * from './utilization.js';
export { runReportJson, oomFindingJson, type RunReportJson, type AttemptReportJson, type OomFindingJson } from './json.js';
export { parseStoredRunReport, storedSnapshotFiles, STORED_REPORT_VERSION, type StoredRunReport, type StoredAttempt, type StoredCompanion, type StoredGpuSplit, type StoredAllocatorAtOom } from './stored-report.js';
