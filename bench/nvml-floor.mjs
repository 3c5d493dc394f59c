/**
 * A floor for the 1-Hz benchmarks (bench/sampling.bench.ts): a Node process that makes, once a second, the NVML
 * calls of one steady gpumem sample — per GPU the memory (v2), utilisation, temperature, power draw and both
 * process lists (v3, into buffers held across samples) — through koffi, as gpumem does, and does nothing with the
 * answers. What it costs beyond the driver's charges is what any Node tool pays to wake up and make those calls;
 * a command's CPU beyond it is its own work. test/bench/nvml-floor.test.ts checks that these are the calls of a
 * steady sample. GPUMEM_NVML_LIB names the library; GPUMEM_FLOOR_SAMPLES=N stops after N samples (tests).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const koffi = require('koffi');
const lib = koffi.load(process.env.GPUMEM_NVML_LIB ?? 'libnvidia-ml.so.1');
const Handle = koffi.pointer(koffi.opaque());
const HandleOut = koffi.out(koffi.pointer(Handle));
const fn = (name, args) => lib.func(name, 'int', args);
const init = fn('nvmlInit_v2', []);
const shutdown = fn('nvmlShutdown', []);
const count = fn('nvmlDeviceGetCount_v2', ['void *']);
const byIndex = fn('nvmlDeviceGetHandleByIndex_v2', ['uint', HandleOut]);
const memory = fn('nvmlDeviceGetMemoryInfo_v2', [Handle, 'void *']);
const utilization = fn('nvmlDeviceGetUtilizationRates', [Handle, 'void *']);
const temperature = fn('nvmlDeviceGetTemperature', [Handle, 'int', 'void *']);
const power = fn('nvmlDeviceGetPowerUsage', [Handle, 'void *']);
const compute = fn('nvmlDeviceGetComputeRunningProcesses_v3', [Handle, 'void *', 'void *']);
const graphics = fn('nvmlDeviceGetGraphicsRunningProcesses_v3', [Handle, 'void *', 'void *']);

// nvmlMemory_v2_t (version, total, reserved, free, used) and its version word; a process entry is 40 bytes (v3).
const MEMORY_V2_SIZE = 40;
const MEMORY_V2_VERSION = MEMORY_V2_SIZE | (2 << 24);
const ENTRIES = 1024;
if (init() !== 0) throw new Error('nvmlInit_v2 failed');
const n = new Uint32Array(1);
count(n);
const handles = [];
for (let i = 0; i < (n[0] ?? 0); i++) {
  const out = [null];
  byIndex(i, out);
  handles.push(out[0]);
}
const memoryBuf = Buffer.alloc(MEMORY_V2_SIZE);
const word = new Uint32Array(1);
const entries = new Uint32Array(1);
const lists = handles.map(() => [Buffer.alloc(ENTRIES * 40), Buffer.alloc(ENTRIES * 40)]);
const limit = Number(process.env.GPUMEM_FLOOR_SAMPLES ?? Infinity);
let taken = 0;
const sample = () => {
  handles.forEach((h, i) => {
    memoryBuf.writeUInt32LE(MEMORY_V2_VERSION, 0);
    memory(h, memoryBuf);
    utilization(h, memoryBuf);
    temperature(h, 0, word);
    power(h, word);
    entries[0] = ENTRIES;
    compute(h, entries, lists[i][0]);
    entries[0] = ENTRIES;
    graphics(h, entries, lists[i][1]);
  });
  if (++taken >= limit) {
    clearInterval(timer);
    shutdown();
  }
};
const timer = setInterval(sample, 1000);
