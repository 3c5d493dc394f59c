/**
 * One GPU's fields from NVML. Identity (uuid, name, PCI bus id, minor number) is read once per session;
 * the rest every sample. Each field that cannot be read is null with its reason; GPU_IS_LOST aborts the
 * device (DeviceUnreadable) and the caller marks it.
 */
import type { Device, DeviceMemory, DeviceStatus, Unavailable } from '../../core/types.js';
import { invoke, readUint, scratchStruct, scratchU32 } from './calls.js';
import { NAME_BUFFER_SIZE, PCI_INFO, readCString, UTILIZATION, UUID_BUFFER_SIZE } from './layouts.js';
import type { DeviceHandle, NvmlCall, NvmlFunctions } from './library.js';
import { readMemory, type MemoryApiState } from './memory.js';
import { readClocks, readPowerDrawMw, readTotalEnergyMj } from './power.js';

export interface DeviceIdentity {
  uuid: string | null;
  name: string | null;
  pciBusId: string | null;
  minorNumber: number | null;
  unavailable: Unavailable;
}

/** Driver-wide facts, read once per session, copied onto every device. */
export interface SystemInfo {
  driverVersion: string | null;
  cudaDriverVersion: string | null;
  unavailable: Unavailable;
}

/** nvmlComputeMode_t → the words nvidia-smi prints. */
const COMPUTE_MODES: Record<number, string> = { 0: 'Default', 1: 'Exclusive_Thread', 2: 'Prohibited', 3: 'Exclusive_Process' };

/** The nvidia-smi word for an nvmlComputeMode_t value. */
export function computeModeName(mode: number): string {
  return COMPUTE_MODES[mode] ?? `Unknown (${mode})`;
}

const stringBuf = Buffer.alloc(Math.max(NAME_BUFFER_SIZE, UUID_BUFFER_SIZE));
const pendingU32 = new Uint32Array(1);

/** Reads a string out-parameter `fn(handle, buf, length)`; null with a reason on failure. */
export function readString(fn: NvmlCall | null, symbol: string, field: string, unavailable: Unavailable, handle: DeviceHandle): string | null {
  stringBuf.fill(0);
  return invoke(fn, symbol, field, unavailable, [handle, stringBuf, stringBuf.length]) ? readCString(stringBuf) : null;
}

/** Reads the per-session identity of a device. Throws DeviceUnreadable on GPU_IS_LOST. */
export function readIdentity(fns: NvmlFunctions, handle: DeviceHandle): DeviceIdentity {
  const unavailable: Unavailable = {};
  const uuid = readString(fns.uuid, 'nvmlDeviceGetUUID', 'uuid', unavailable, handle);
  const name = readString(fns.name, 'nvmlDeviceGetName', 'name', unavailable, handle);
  scratchStruct.fill(0, 0, PCI_INFO.size);
  const pciBusId = invoke(fns.pciInfo, 'nvmlDeviceGetPciInfo_v3', 'pciBusId', unavailable, [handle, scratchStruct])
    ? readCString(scratchStruct, PCI_INFO.busId, PCI_INFO.busIdLength)
    : null;
  const minorNumber = readUint(fns.minorNumber, 'nvmlDeviceGetMinorNumber', 'minorNumber', unavailable, handle);
  return { uuid, name, pciBusId, minorNumber, unavailable };
}

/** "12.8" from nvmlSystemGetCudaDriverVersion_v2's 12080 (major = v / 1000, minor = (v % 1000) / 10). */
export function formatCudaVersion(version: number): string {
  return `${Math.floor(version / 1000)}.${Math.floor((version % 1000) / 10)}`;
}

/** A device with every per-sample field null for `reason` (lost, forbidden), keeping what identity is known. */
export function unreadableDevice(
  index: number,
  identity: DeviceIdentity | null,
  system: SystemInfo,
  status: DeviceStatus,
  reason: string,
): Device {
  const unavailable: Unavailable = { ...system.unavailable, ...(identity?.unavailable ?? {}) };
  const nulls = ['memory.totalBytes', 'memory.reservedBytes', 'memory.usedBytes', 'memory.freeBytes', 'utilization.gpuPct', 'utilization.memoryPct', 'temperatureC', 'powerDrawMw', 'powerLimitMw', 'computeMode', 'migMode'];
  for (const f of nulls) unavailable[f] = reason;
  if (!identity) for (const f of ['uuid', 'name', 'pciBusId', 'minorNumber']) unavailable[f] = reason;
  const memory: DeviceMemory = { totalBytes: null, reservedBytes: null, usedBytes: null, freeBytes: null };
  return {
    index,
    uuid: identity?.uuid ?? null,
    name: identity?.name ?? null,
    pciBusId: identity?.pciBusId ?? null,
    minorNumber: identity?.minorNumber ?? null,
    status,
    memory,
    utilization: { gpuPct: null, memoryPct: null },
    temperatureC: null,
    powerDrawMw: null,
    powerLimitMw: null,
    computeMode: null,
    migMode: null,
    migInstances: [],
    driverVersion: system.driverVersion,
    cudaDriverVersion: system.cudaDriverVersion,
    unavailable,
  };
}

/**
 * A device's settings: changed only by an administrator (`nvidia-smi -pl`, `-c`, `-mig` and a reset), so a
 * live view may re-read them every few seconds instead of every sample (NvmlSourceOptions.settingsEveryMs).
 */
export interface DeviceSettings {
  powerLimitMw: number | null;
  computeMode: string | null;
  migMode: Device['migMode'];
  /** Reasons for the settings that could not be read. */
  unavailable: Unavailable;
}

/** Reads the power limit, compute mode and MIG mode. Throws DeviceUnreadable on GPU_IS_LOST. */
export function readSettings(fns: NvmlFunctions, handle: DeviceHandle): DeviceSettings {
  const unavailable: Unavailable = {};
  const powerLimitMw = readUint(fns.powerLimit, 'nvmlDeviceGetEnforcedPowerLimit', 'powerLimitMw', unavailable, handle);
  const modeNumber = readUint(fns.computeMode, 'nvmlDeviceGetComputeMode', 'computeMode', unavailable, handle);
  const computeMode = modeNumber === null ? null : computeModeName(modeNumber);
  let migMode: Device['migMode'] = null;
  scratchU32[0] = 0;
  if (invoke(fns.migMode, 'nvmlDeviceGetMigMode', 'migMode', unavailable, [handle, scratchU32, pendingU32])) {
    migMode = scratchU32[0] === 1 ? 'enabled' : 'disabled';
  }
  return { powerLimitMw, computeMode, migMode, unavailable };
}

/** What readDevice reads besides the fields every view needs. */
export interface DeviceReadOptions {
  /** Gives the settings, read now or kept from earlier (see DeviceSettings); default: read now. */
  settings?: () => DeviceSettings;
  /** Read SM/memory clocks (default true). */
  clocks?: boolean;
  /** Read total energy (default true; 3.84 ms of CPU per call on an H100). */
  energy?: boolean;
}

/**
 * Reads every per-sample field of a readable device (MIG instances are added by the caller). Throws
 * DeviceUnreadable on GPU_IS_LOST.
 */
export function readDevice(
  fns: NvmlFunctions,
  memoryApi: MemoryApiState,
  handle: DeviceHandle,
  index: number,
  identity: DeviceIdentity,
  system: SystemInfo,
  options: DeviceReadOptions = {},
): Device {
  const unavailable: Unavailable = { ...system.unavailable, ...identity.unavailable };
  const { memory, noPermission } = readMemory(fns, memoryApi, handle, unavailable);

  let gpuPct: number | null = null;
  let memoryPct: number | null = null;
  scratchStruct.fill(0, 0, UTILIZATION.size);
  if (invoke(fns.utilization, 'nvmlDeviceGetUtilizationRates', 'utilization', unavailable, [handle, scratchStruct])) {
    gpuPct = scratchStruct.readUInt32LE(UTILIZATION.gpu);
    memoryPct = scratchStruct.readUInt32LE(UTILIZATION.memory);
  } else {
    unavailable['utilization.gpuPct'] = unavailable['utilization.memoryPct'] = unavailable.utilization as string;
    delete unavailable.utilization;
  }
  const temperatureC = readUint(fns.temperature, 'nvmlDeviceGetTemperature', 'temperatureC', unavailable, handle, 0);
  const powerDrawMw = readPowerDrawMw(fns, handle, unavailable);
  const withClocks = options.clocks !== false;
  const withEnergy = options.energy !== false;
  const clocks = withClocks ? readClocks(fns, handle, unavailable) : undefined;
  const totalEnergyMj = withEnergy ? readTotalEnergyMj(fns, handle, unavailable) : undefined;
  const settings = options.settings ? options.settings() : readSettings(fns, handle);
  const { powerLimitMw, computeMode, migMode } = settings;
  for (const key in settings.unavailable) unavailable[key] = settings.unavailable[key] as string;
  const device: Device = {
    index,
    uuid: identity.uuid,
    name: identity.name,
    pciBusId: identity.pciBusId,
    minorNumber: identity.minorNumber,
    status: noPermission ? 'no-permission' : 'ok',
    memory,
    utilization: { gpuPct, memoryPct },
    temperatureC,
    powerDrawMw,
    powerLimitMw,
    clocks,
    totalEnergyMj,
    computeMode,
    migMode,
    migInstances: [],
    driverVersion: system.driverVersion,
    cudaDriverVersion: system.cudaDriverVersion,
    unavailable,
  };
  // Not read is absent, as in a recording, not "unavailable".
  if (!withClocks) delete device.clocks;
  if (!withEnergy) delete device.totalEnergyMj;
  return device;
}
