/** sources/nvml: GPU state from libnvidia-ml.so.1 through koffi (the only folder that imports koffi). */
export { NvmlSource, openNvmlSource, resolveNvmlLibPath, SM_NOT_READ, type NvmlFields, type NvmlSourceOptions } from './source.js';
export { nvmlReturnHint, nvmlReturnName } from './return-codes.js';
export { chooseProcessApi, type ProcessApiChoice } from './process-api.js';
export { becomeChildSubreaper } from './subreaper.js';
