/** Host facts from /proc: per-pid facts, sample enrichment, process-tree and pid-reuse readers. */
export { readHostFacts, readProcStat, readStartTicks, readBootTimeMs, userName, reasonFor, type ProcOptions } from './host-facts.js';
export { createHostEnricher, enrichSample, listChildren, listDescendants, listPids, type HostEnricher } from './enrich.js';
export { parseProcStat, parseContainerId, parseCudaEnv, parseCmdline, parsePasswd, parseBootTimeSec, statusNumbers, type ProcStat } from './parse.js';
export { detectContainer, type ContainerProbeOptions } from './container.js';
export { readNvidiaDeviceFds, testDevicePrefixProblem, type DeviceFds, type DeviceFdOptions } from './device-fds.js';
