/**
 * Schemas of the GPU state model (core/types.ts): a device with its memory, utilization, clocks and MIG
 * instances, a GPU process row with its host facts, a sample's source. Shared by every document that carries
 * them (status, diagnose, runs …). Objects stay open: a replayed recording keeps fields a newer gpumem wrote.
 */
import type { Device, DeviceStatus, GpuProcessKind, ProcessState, SourceKind } from '../types.js';
import { arrayOf, boolean, integer, mapOf, members, nullable, number, object, oneOf, string, strings, unavailable, type JsonSchema } from './schema.js';

const nullableInt = nullable(integer);
const nullableNumber = nullable(number);
const nullableString = nullable(string);

/** DeviceMemory: byte counts, null when the driver does not say. */
export const deviceMemorySchema = object({ totalBytes: nullableInt, reservedBytes: nullableInt, usedBytes: nullableInt, freeBytes: nullableInt });

/** MigInstance: one GPU or compute instance of a MIG-enabled device. */
export const migInstanceSchema = object({
  gpuInstanceId: integer,
  computeInstanceId: nullableInt,
  uuid: nullableString,
  profile: nullableString,
  memory: deviceMemorySchema,
  unavailable,
});

/** Device: one GPU as a source read it. `clocks` and `totalEnergyMj` are absent where the source does not read them. */
export const deviceSchema = object({
  index: integer,
  uuid: nullableString,
  name: nullableString,
  pciBusId: nullableString,
  minorNumber: nullableInt,
  status: oneOf(members<DeviceStatus>()(['ok', 'lost', 'no-permission', 'error'])),
  memory: deviceMemorySchema,
  utilization: object({ gpuPct: nullableNumber, memoryPct: nullableNumber }),
  temperatureC: nullableNumber,
  powerDrawMw: nullableNumber,
  powerLimitMw: nullableNumber,
  clocks: object({ smMhz: nullableNumber, memoryMhz: nullableNumber }),
  totalEnergyMj: nullableNumber,
  computeMode: nullableString,
  migMode: oneOf(members<NonNullable<Device['migMode']>>()(['enabled', 'disabled']), true),
  migInstances: arrayOf(migInstanceSchema),
  driverVersion: nullableString,
  cudaDriverVersion: nullableString,
  unavailable,
}, ['clocks', 'totalEnergyMj']);

/** ProcessState: the state letter of /proc/PID/stat. */
export const processStates = members<ProcessState>()(['R', 'S', 'D', 'Z', 'T', 't', 'X', 'I', 'W', 'P', 'K']);

/** JobFacts: the Slurm job, Kubernetes pod or `gpumem run` a process belongs to. */
export const jobFactsSchema = object({ slurmJobId: nullableString, podUid: nullableString, podName: nullableString, podNamespace: nullableString, runMark: nullableString });

/**
 * HostFacts: what /proc says about a pid. `cudaEnv` is a map of variable names to values (the CUDA and rank
 * variables gpumem reads; a recording may carry others). `cpuTicks`, `cpuTicksAtMs`, `cpuPct`, `rssBytes` and
 * `job` are absent where a source does not read them (live views only, or recordings made before gpumem did).
 */
export const hostFactsSchema = object({
  visible: boolean,
  uid: nullableInt,
  user: nullableString,
  ppid: nullableInt,
  cmdline: nullable(strings),
  exe: nullableString,
  startTimeMs: nullableNumber,
  startTicks: nullableNumber,
  state: oneOf(processStates, true),
  cpuTicks: nullableNumber,
  cpuTicksAtMs: number,
  cpuPct: nullableNumber,
  rssBytes: nullableInt,
  containerId: nullableString,
  nspid: nullable(arrayOf(integer)),
  cudaEnv: nullable(mapOf(string)),
  job: nullable(jobFactsSchema),
  unavailable,
}, ['cpuTicks', 'cpuTicksAtMs', 'cpuPct', 'rssBytes', 'job']);

/** GpuProcess: one (pid, GPU) row with its host facts (null until enriched). */
export const gpuProcessSchema = object({
  pid: integer,
  gpuUuid: nullableString,
  gpuIndex: nullableInt,
  gpuInstanceId: nullableInt,
  computeInstanceId: nullableInt,
  usedBytes: nullableInt,
  kind: oneOf(members<GpuProcessKind>()(['compute', 'graphics', 'compute+graphics'])),
  name: nullableString,
  smUtilPct: nullableNumber,
  host: nullable(hostFactsSchema),
  unavailable,
});

/** SampleSource: where a sample's numbers came from. */
export const sampleSourceSchema = object({ kind: oneOf(members<SourceKind>()(['nvml', 'smi', 'replay'])), detail: string, note: string }, ['note']);

/** The fields of a Sample, for documents that are one (status). */
export const sampleProperties: Record<string, JsonSchema> = {
  timeMs: integer,
  source: sampleSourceSchema,
  devices: arrayOf(deviceSchema),
  processes: arrayOf(gpuProcessSchema),
  unavailable,
};
