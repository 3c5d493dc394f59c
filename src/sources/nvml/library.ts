/**
 * Loading libnvidia-ml.so.1 through koffi and declaring every function once. Optional symbols are probed
 * here, once; a missing one is null and only the field it feeds goes unavailable. One NVML session per
 * library per process: the first open initialises, the last close shuts down.
 */
import { koffi } from './ffi.js';
import { GpumemError } from '../../core/errors.js';
import { chooseProcessApi, type ProcessApiChoice } from './process-api.js';
import { NVML_SUCCESS, nvmlReturnHint, nvmlReturnName } from './return-codes.js';

/** A C function returning nvmlReturn_t; arguments are Buffers, typed arrays, handles or numbers. */
export type NvmlCall = (...args: unknown[]) => number;

/** The opaque nvmlDevice_t as koffi hands it back (an External in koffi 2, a bigint in 3). */
export type DeviceHandle = unknown;

const Handle = koffi.pointer(koffi.opaque());
const HandleOut = koffi.out(koffi.pointer(Handle));

export interface ProcessCall {
  symbol: string;
  call: NvmlCall;
  choice: ProcessApiChoice;
}

export interface NvmlFunctions {
  init: NvmlCall;
  shutdown: NvmlCall;
  getCount: NvmlCall;
  getHandleByIndex: NvmlCall;
  memoryV1: NvmlCall;
  memoryV2: NvmlCall | null;
  driverVersion: NvmlCall | null;
  cudaDriverVersion: NvmlCall | null;
  name: NvmlCall | null;
  uuid: NvmlCall | null;
  pciInfo: NvmlCall | null;
  minorNumber: NvmlCall | null;
  utilization: NvmlCall | null;
  temperature: NvmlCall | null;
  powerUsage: NvmlCall | null;
  powerLimit: NvmlCall | null;
  fieldValues: NvmlCall | null;
  clockInfo: NvmlCall | null;
  totalEnergy: NvmlCall | null;
  computeMode: NvmlCall | null;
  migMode: NvmlCall | null;
  maxMigDeviceCount: NvmlCall | null;
  migHandleByIndex: NvmlCall | null;
  gpuInstanceId: NvmlCall | null;
  computeInstanceId: NvmlCall | null;
  processUtilization: NvmlCall | null;
  computeProcesses: ProcessCall;
  graphicsProcesses: ProcessCall;
}

export interface NvmlLibrary {
  path: string;
  fns: NvmlFunctions;
  /** Optional symbols this library lacks (their fields read null with a reason). */
  missing: Set<string>;
}

type Signature = [string, Array<string | ReturnType<typeof koffi.pointer>>];
const H = Handle;
const SIGNATURES: Record<string, Signature> = {
  nvmlInit_v2: ['int', []],
  nvmlShutdown: ['int', []],
  nvmlDeviceGetCount_v2: ['int', ['void *']],
  nvmlDeviceGetHandleByIndex_v2: ['int', ['uint', HandleOut]],
  nvmlDeviceGetMemoryInfo: ['int', [H, 'void *']],
  nvmlDeviceGetMemoryInfo_v2: ['int', [H, 'void *']],
  nvmlSystemGetDriverVersion: ['int', ['void *', 'uint']],
  nvmlSystemGetCudaDriverVersion_v2: ['int', ['void *']],
  nvmlDeviceGetName: ['int', [H, 'void *', 'uint']],
  nvmlDeviceGetUUID: ['int', [H, 'void *', 'uint']],
  nvmlDeviceGetPciInfo_v3: ['int', [H, 'void *']],
  nvmlDeviceGetMinorNumber: ['int', [H, 'void *']],
  nvmlDeviceGetUtilizationRates: ['int', [H, 'void *']],
  nvmlDeviceGetTemperature: ['int', [H, 'int', 'void *']],
  nvmlDeviceGetPowerUsage: ['int', [H, 'void *']],
  nvmlDeviceGetEnforcedPowerLimit: ['int', [H, 'void *']],
  nvmlDeviceGetFieldValues: ['int', [H, 'int', 'void *']],
  nvmlDeviceGetClockInfo: ['int', [H, 'int', 'void *']],
  nvmlDeviceGetTotalEnergyConsumption: ['int', [H, 'void *']],
  nvmlDeviceGetComputeMode: ['int', [H, 'void *']],
  nvmlDeviceGetMigMode: ['int', [H, 'void *', 'void *']],
  nvmlDeviceGetMaxMigDeviceCount: ['int', [H, 'void *']],
  nvmlDeviceGetMigDeviceHandleByIndex: ['int', [H, 'uint', HandleOut]],
  nvmlDeviceGetGpuInstanceId: ['int', [H, 'void *']],
  nvmlDeviceGetComputeInstanceId: ['int', [H, 'void *']],
  nvmlDeviceGetProcessUtilization: ['int', [H, 'void *', 'void *', 'uint64']],
};
const PROCESS_SIGNATURE: Signature = ['int', [H, 'void *', 'void *']];
/** Symbols only probed for presence: they tell driver eras apart. */
const PROBE_ONLY = ['nvmlDeviceGetConfComputeMemSizeInfo', 'nvmlDeviceGetRunningProcessDetailList'];

const noGpuHint = (path: string): string =>
  `install the NVIDIA driver, or point --nvml-lib / GPUMEM_NVML_LIB at libnvidia-ml.so.1 (tried "${path}"); ` +
  '`--source smi` uses nvidia-smi instead';

function loadLibrary(path: string): NvmlLibrary {
  let lib: ReturnType<typeof koffi.load>;
  try {
    lib = koffi.load(path);
  } catch (cause) {
    const why = cause instanceof Error ? cause.message.replace(/^Failed to load shared library:\s*/, '') : String(cause);
    throw new GpumemError('NO_GPU_ACCESS', `cannot load the NVML library "${path}": ${why}`, {
      hint: noGpuHint(path),
      cause,
      details: { libPath: path, loaderReason: why },
    });
  }
  const missing = new Set<string>();
  const declare = (symbol: string, sig: Signature = SIGNATURES[symbol] as Signature): NvmlCall | null => {
    try {
      return lib.func(symbol, sig[0], sig[1]) as NvmlCall;
    } catch {
      missing.add(symbol);
      return null;
    }
  };
  const required = (symbol: string): NvmlCall => {
    const fn = declare(symbol);
    if (fn) return fn;
    throw new GpumemError('NO_GPU_ACCESS', `"${path}" lacks ${symbol}: it is not a usable NVML library`, {
      hint: noGpuHint(path),
      details: { libPath: path, symbol },
    });
  };
  for (const symbol of PROBE_ONLY) declare(symbol, ['int', []]);
  const processCall = (list: 'Compute' | 'Graphics'): ProcessCall => {
    for (const suffix of ['_v3', '_v2', ''] as const) declare(`nvmlDeviceGet${list}RunningProcesses${suffix}`, PROCESS_SIGNATURE);
    const choice = chooseProcessApi((s) => !missing.has(s), list);
    const symbol = `nvmlDeviceGet${list}RunningProcesses${choice.suffix}`;
    // Re-declaring is cheap and keeps the chosen call's koffi object in one place.
    const call = declare(symbol, PROCESS_SIGNATURE);
    if (!call) throw new GpumemError('NO_GPU_ACCESS', `"${path}" has no ${list.toLowerCase()} process-list call`, { hint: noGpuHint(path) });
    return { symbol, call, choice };
  };
  const fns: NvmlFunctions = {
    init: required('nvmlInit_v2'),
    shutdown: required('nvmlShutdown'),
    getCount: required('nvmlDeviceGetCount_v2'),
    getHandleByIndex: required('nvmlDeviceGetHandleByIndex_v2'),
    memoryV1: required('nvmlDeviceGetMemoryInfo'),
    memoryV2: declare('nvmlDeviceGetMemoryInfo_v2'),
    driverVersion: declare('nvmlSystemGetDriverVersion'),
    cudaDriverVersion: declare('nvmlSystemGetCudaDriverVersion_v2'),
    name: declare('nvmlDeviceGetName'),
    uuid: declare('nvmlDeviceGetUUID'),
    pciInfo: declare('nvmlDeviceGetPciInfo_v3'),
    minorNumber: declare('nvmlDeviceGetMinorNumber'),
    utilization: declare('nvmlDeviceGetUtilizationRates'),
    temperature: declare('nvmlDeviceGetTemperature'),
    powerUsage: declare('nvmlDeviceGetPowerUsage'),
    powerLimit: declare('nvmlDeviceGetEnforcedPowerLimit'),
    fieldValues: declare('nvmlDeviceGetFieldValues'),
    clockInfo: declare('nvmlDeviceGetClockInfo'),
    totalEnergy: declare('nvmlDeviceGetTotalEnergyConsumption'),
    computeMode: declare('nvmlDeviceGetComputeMode'),
    migMode: declare('nvmlDeviceGetMigMode'),
    maxMigDeviceCount: declare('nvmlDeviceGetMaxMigDeviceCount'),
    migHandleByIndex: declare('nvmlDeviceGetMigDeviceHandleByIndex'),
    gpuInstanceId: declare('nvmlDeviceGetGpuInstanceId'),
    computeInstanceId: declare('nvmlDeviceGetComputeInstanceId'),
    processUtilization: declare('nvmlDeviceGetProcessUtilization'),
    computeProcesses: processCall('Compute'),
    graphicsProcesses: processCall('Graphics'),
  };
  return { path, fns, missing };
}

interface Session {
  library: NvmlLibrary;
  refs: number;
}
const sessions = new Map<string, Session>();

/**
 * Loads (once) and initialises NVML from `path`, sharing one session per library per process. Throws
 * GpumemError NO_GPU_ACCESS when the library cannot be loaded, NVML_ERROR naming the return code when
 * nvmlInit_v2 fails.
 */
export function acquireNvml(path: string): NvmlLibrary {
  const known = sessions.get(path);
  const library = known?.library ?? loadLibrary(path);
  if (!known || known.refs === 0) {
    const rc = library.fns.init();
    if (rc !== NVML_SUCCESS) {
      const name = nvmlReturnName(rc);
      const code = rc === 9 || rc === 12 || rc === 4 ? 'NO_GPU_ACCESS' : 'NVML_ERROR';
      throw new GpumemError(code, `nvmlInit_v2 failed for "${path}": ${name} (${rc})`, {
        hint: nvmlReturnHint(rc),
        details: { libPath: path, nvmlReturn: rc, nvmlReturnName: name },
      });
    }
  }
  sessions.set(path, { library, refs: (known?.refs ?? 0) + 1 });
  return library;
}

/** Drops one user of the session; the last one calls nvmlShutdown. */
export function releaseNvml(library: NvmlLibrary): void {
  const s = sessions.get(library.path);
  if (!s || s.refs === 0) return;
  s.refs--;
  if (s.refs === 0) library.fns.shutdown();
}
