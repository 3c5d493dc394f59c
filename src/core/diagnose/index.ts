/** core/diagnose: account for every byte per GPU and name what is wrong. Pure: samples in, report out. */
export { diagnose, buildContext, DIAGNOSE_SCHEMA_VERSION } from './engine.js';
export type { DiagnoseReport } from './engine.js';
export { accountDevice, PYTORCH_SPLIT_UNKNOWN } from './accounting.js';
export { buildTrees, userTotals } from './trees.js';
export { patchReport, sameAncestors } from './patch.js';
export { buildProcessViews, findRow, measureUtil, rowOnGpu } from './process-view.js';
export { parseCudaVisibleDevices, allowedGpuIndexes } from './cuda-visible.js';
export { isKernelCommand, isPythonCommand, launcherName } from './classify.js';
export { RULES, RULES as DIAGNOSE_RULES } from './rules/index.js';
export { THRESHOLDS } from './thresholds.js';
export type * from './types.js';
export { reportJson, type Fallback } from './report-json.js';
