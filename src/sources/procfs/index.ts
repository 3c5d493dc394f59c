/** Everything gpumem reads from /proc: per-pid host facts, sample enrichment, the process table and tree, start ticks for pid-reuse checks, device fds. */
export { readHostFacts, refreshHostFacts, readBootTimeMs, userName, userNameExists, reasonFor, NOT_READ_FOR_TABLE, type ProcOptions } from './host-facts.js';
export { readProcStat, readStartTicks, readProcTable, readProcText, readCmdline, readEnviron, listPids, childrenByParent, descendantsOf, type ProcRootOptions } from './stat.js';
export { createHostEnricher, enrichSample, type HostEnricher } from './enrich.js';
export { heldFilesBudget } from './fd-budget.js';
export { parseProcStat, parseProcStatBytes, parseStatmResidentPages, parseContainerId, parseCudaEnv, parseCmdline, parsePasswd, parseBootTimeSec, statusNumbers, type ProcStat } from './parse.js';
export { parseJobFacts, parseRunMark } from './job.js';
export { detectContainer, type ContainerProbeOptions } from './container.js';
export { readNvidiaDeviceFds, testDevicePrefixProblem, type DeviceFds, type DeviceFdOptions } from './device-fds.js';
