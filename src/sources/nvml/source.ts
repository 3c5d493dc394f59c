/**
 * The NVML GpuSource: one session on libnvidia-ml.so.1, handles and identities resolved once, then every
 * sample reads each device's fields, MIG instances and processes. A device that is lost or forbidden is
 * marked (Device.status) and the others are still read. Host facts are not read here (host: null);
 * sources/procfs enriches samples afterwards.
 */
import type { Device, GpuProcess, Sample, Unavailable } from '../../core/types.js';
import { GpumemError } from '../../core/errors.js';
import { sameData } from '../../core/same-data.js';
import type { GpuSource } from '../source.js';
import { callReason, DeviceUnreadable, invoke, readUint, scratchU32 } from './calls.js';
import { computeModeName, formatCudaVersion, readDevice, readIdentity, readSettings, unreadableDevice, type DeviceIdentity, type DeviceSettings, type SystemInfo } from './device.js';
import { DRIVER_VERSION_BUFFER_SIZE, readCString } from './layouts.js';
import { acquireNvml, releaseNvml, type DeviceHandle, type NvmlLibrary } from './library.js';
import { initialMemoryApi, type MemoryApiState } from './memory.js';
import { readMigInstances } from './mig.js';
import { readTotalEnergyMj } from './power.js';
import { ListBuffer, mergeEntries, readProcessList } from './processes.js';
import { readSmUtilization, UtilBuffer } from './process-util.js';
import { SM_NOT_READ, SmSchedule, smDue } from './sm-schedule.js';
import type { ProcessApiChoice } from './process-api.js';
import { NVML_ERROR_GPU_IS_LOST, NVML_ERROR_NO_PERMISSION, NVML_SUCCESS, nvmlReturnHint, nvmlReturnName } from './return-codes.js';

/**
 * Which fields a consumer needs, and how fresh. A real driver charges very different prices per call (CPU time
 * per call on an H100, driver 580: total energy 3.84 ms, per-process utilization 2.53 ms, power limit 0.18 ms,
 * MIG mode 0.15 ms; memory, processes, utilization, temperature, power draw, clocks ≤ 0.021 ms), so each
 * consumer declares what it shows instead of every sample paying for everything. Leaving a field out keeps
 * the default: everything, every sample.
 */
export interface NvmlFields {
  /**
   * Re-read each device's power limit, compute mode and MIG mode at most this often, in ms (default 0: every
   * sample). They change only when an administrator changes them, so a live view shows such a change within
   * this period. Name, UUID, PCI bus id and minor number are read once per session in any case.
   */
  settingsEveryMs?: number;
  /** Read SM and memory clocks every sample (default true). Not read: `clocks` is absent from the device. */
  clocks?: boolean;
  /**
   * Read total energy every sample (default true). Not read: `totalEnergyMj` is absent; a consumer that exports
   * it reads it when asked instead (NvmlSource.readTotalEnergyMj, /metrics at scrape time).
   */
  energy?: boolean;
  /**
   * Per-process SM %: read at most this often, in ms (default 0: every sample); null: never (each row says so).
   * The driver's timestamp protocol hands back every sample taken since the previous read, so a read every few
   * seconds loses nothing: its means cover the whole time since the read before, and the samples in between
   * carry them (a pid that appeared since has none until the next read).
   */
  processSmEveryMs?: number | null;
  /**
   * A view that draws SM % for some GPUs only (the rows on screen): whether GPU `index` is one of them now;
   * those are read at processSmShownEveryMs, the others keep processSmEveryMs (a slow period, for findings).
   */
  processSmShown?: (index: number) => boolean;
  /** Period for the GPUs processSmShown names, in ms (default: processSmEveryMs). */
  processSmShownEveryMs?: number;
  /**
   * The share of one core the shown GPUs' SM % reads may take (0.0005: 0.05 %). A read's cost is measured on
   * the calls themselves (2.5 ms on an H100, microseconds on other drivers), and the shown period stretches
   * to (GPUs shown × cost) / budget when that is longer than processSmShownEveryMs: eight H100s on screen
   * are read every 40 s at 0.05 %, one every 5 s. Default: no budget.
   */
  processSmBudget?: number;
  /**
   * The same for the GPUs not shown (their processSmEveryMs period): a command whose slow reads serve only a
   * diagnosis nobody may ask for (serve with no page open) bounds them too. Default: no budget.
   */
  processSmUnshownBudget?: number;
}

export interface NvmlSourceOptions extends NvmlFields {
  /** Library to load; default env GPUMEM_NVML_LIB, else "libnvidia-ml.so.1" (found by the dynamic loader). */
  libPath?: string;
  /** Clock for the periods above (tests). */
  nowMs?: () => number;
  /** Monotonic clock, ms, that times the SM % reads for processSmBudget (tests). Default performance.now. */
  costClockMs?: () => number;
}

export { SM_NOT_READ };

/** The library path gpumem uses: the option, else GPUMEM_NVML_LIB, else libnvidia-ml.so.1. */
export function resolveNvmlLibPath(options: NvmlSourceOptions = {}): string {
  return options.libPath || process.env.GPUMEM_NVML_LIB || 'libnvidia-ml.so.1';
}

interface DeviceSlot {
  index: number;
  handle: DeviceHandle | null;
  identity: DeviceIdentity | null;
  settings: DeviceSettings | null;
  settingsAtMs: number;
  /** When per-process SM % was last read (null: not yet), and why it gave no means then (null: it did). */
  smAtMs: number | null;
  noSm: string | null;
  compute: ListBuffer;
  graphics: ListBuffer;
  util: UtilBuffer;
  /**
   * The rows of the previous sample, handed out again while both lists and every SM % are as they were (a live
   * view's steady state builds no row). Valid only when both lists were read then; rows are never changed.
   */
  rows: GpuProcess[] | null;
  /** The device as the previous sample gave it, handed out again while every field reads the same. */
  device: Device | null;
  /** What this slot gave the latest sample. */
  out: SlotOut | null;
}

interface SlotOut {
  device: Device;
  rows: GpuProcess[];
}

/** A GPU without processes: one array for every such sample, never written to. */
const NO_ROWS: GpuProcess[] = [];

const statusFor = (rc: number): Device['status'] =>
  rc === NVML_ERROR_GPU_IS_LOST ? 'lost' : rc === NVML_ERROR_NO_PERMISSION ? 'no-permission' : 'error';

export class NvmlSource implements GpuSource {
  readonly kind = 'nvml' as const;
  readonly libPath: string;
  private readonly lib: NvmlLibrary;
  private readonly memoryApi: MemoryApiState;
  private readonly system: SystemInfo;
  private readonly slots: DeviceSlot[] = [];
  private readonly handleOut: unknown[] = [null];
  private readonly settingsEveryMs: number;
  private readonly clocks: boolean;
  private readonly energy: boolean;
  private readonly sm: SmSchedule;
  private readonly nowMs: () => number;
  private closed = false;
  private readonly sourceInfo: Sample['source'];
  /** The arrays of the previous sample (see readSampleSync). */
  private last: { devices: Device[]; processes: GpuProcess[] } | null = null;

  constructor(options: NvmlSourceOptions = {}) {
    this.libPath = resolveNvmlLibPath(options);
    this.sourceInfo = { kind: 'nvml', detail: this.libPath };
    this.settingsEveryMs = options.settingsEveryMs ?? 0;
    this.clocks = options.clocks !== false;
    this.energy = options.energy !== false;
    this.sm = new SmSchedule(options, options.costClockMs);
    this.nowMs = options.nowMs ?? Date.now;
    this.lib = acquireNvml(this.libPath);
    try {
      this.memoryApi = initialMemoryApi(this.lib.fns);
      this.system = this.readSystem();
      scratchU32[0] = 0;
      const rc = this.lib.fns.getCount(scratchU32);
      if (rc !== NVML_SUCCESS) {
        throw new GpumemError('NVML_ERROR', `nvmlDeviceGetCount_v2 failed for "${this.libPath}": ${nvmlReturnName(rc)} (${rc})`, {
          hint: nvmlReturnHint(rc),
          details: { libPath: this.libPath, nvmlReturn: rc },
        });
      }
      const count = scratchU32[0] as number;
      for (let index = 0; index < count; index++) {
        this.slots.push({ index, handle: null, identity: null, settings: null, settingsAtMs: 0, smAtMs: null, noSm: null, compute: new ListBuffer(), graphics: new ListBuffer(), util: new UtilBuffer(), rows: null, device: null, out: null });
      }
    } catch (err) {
      releaseNvml(this.lib);
      throw err;
    }
  }

  /** Which NVML calls were chosen at load (the versioned variant or its fallback), for docs and tests. */
  describeApis(): { memory: 'v2' | 'v1'; memoryReason: string | null; compute: ProcessApiChoice & { symbol: string }; graphics: ProcessApiChoice & { symbol: string }; missing: string[] } {
    const { computeProcesses: c, graphicsProcesses: g } = this.lib.fns;
    return {
      memory: this.memoryApi.v2Usable ? 'v2' : 'v1',
      memoryReason: this.memoryApi.v2Reason,
      compute: { ...c.choice, symbol: c.symbol },
      graphics: { ...g.choice, symbol: g.symbol },
      missing: [...this.lib.missing].sort(),
    };
  }

  async readSample(): Promise<Sample> {
    return this.readSampleSync();
  }

  /** Reads all devices and processes now, synchronously (each NVML call takes microseconds). */
  readSampleSync(): Sample {
    if (this.closed) throw new GpumemError('FAILED', 'the NVML source was used after close()', { hint: 'this is a gpumem bug; please report it' });
    let same = this.last !== null;
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[i] as DeviceSlot;
      const before = slot.out;
      slot.out = this.readSlot(slot);
      same &&= slot.out.device === before?.device && slot.out.rows === before.rows;
    }
    // A steady machine gives the previous sample's arrays again (a history then shares them), building neither.
    if (!same || !this.last) {
      const devices: Device[] = [];
      const processes: GpuProcess[] = [];
      for (const slot of this.slots) {
        devices.push((slot.out as SlotOut).device);
        for (const p of (slot.out as SlotOut).rows) processes.push(p);
      }
      this.last = { devices, processes };
    }
    return { timeMs: Date.now(), source: this.sourceInfo, devices: this.last.devices, processes: this.last.processes, unavailable: {} };
  }

  /** Ends this user's share of the NVML session (the last one shuts NVML down). Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    releaseNvml(this.lib);
  }

  private readSystem(): SystemInfo {
    const unavailable: Unavailable = {};
    const fns = this.lib.fns;
    const buf = Buffer.alloc(DRIVER_VERSION_BUFFER_SIZE);
    const driverVersion = invoke(fns.driverVersion, 'nvmlSystemGetDriverVersion', 'driverVersion', unavailable, [buf, buf.length])
      ? readCString(buf)
      : null;
    const cuda = new Int32Array(1);
    const cudaDriverVersion = invoke(fns.cudaDriverVersion, 'nvmlSystemGetCudaDriverVersion_v2', 'cudaDriverVersion', unavailable, [cuda])
      ? formatCudaVersion(cuda[0] as number)
      : null;
    return { driverVersion, cudaDriverVersion, unavailable };
  }

  private readSlot(slot: DeviceSlot): SlotOut {
    const fns = this.lib.fns;
    if (slot.handle === null) {
      this.handleOut[0] = null;
      const rc = fns.getHandleByIndex(slot.index, this.handleOut);
      if (rc !== NVML_SUCCESS) {
        const reason = callReason('nvmlDeviceGetHandleByIndex_v2', rc);
        return { device: unreadableDevice(slot.index, null, this.system, statusFor(rc), reason), rows: [] };
      }
      slot.handle = this.handleOut[0];
    }
    try {
      slot.identity ??= readIdentity(fns, slot.handle);
      const device = readDevice(fns, this.memoryApi, slot.handle, slot.index, slot.identity, this.system, {
        settings: () => this.settingsFor(slot),
        clocks: this.clocks,
        energy: this.energy,
      });
      if (device.migMode === 'enabled') {
        const mig = readMigInstances(fns, this.memoryApi, slot.handle, device.unavailable);
        device.migInstances = mig.instances;
        if (mig.firstHandle !== null) this.readMigComputeMode(device, mig.firstHandle);
      }
      const rows = this.readProcesses(slot, device);
      // Equal devices are one object: a history of a steady GPU then holds one device, not one per sample.
      if (slot.device !== null && sameData(slot.device, device)) return { device: slot.device, rows };
      slot.device = device;
      return { device, rows };
    } catch (err) {
      if (!(err instanceof DeviceUnreadable)) throw err;
      slot.settings = null;
      slot.rows = null;
      slot.device = null;
      return { device: unreadableDevice(slot.index, slot.identity, this.system, statusFor(err.nvmlReturn), err.message), rows: [] };
    }
  }

  /** The slot's settings, read again when settingsEveryMs has passed (every sample by default). */
  private settingsFor(slot: DeviceSlot): DeviceSettings {
    const nowMs = this.settingsEveryMs > 0 ? this.nowMs() : 0;
    if (slot.settings === null || this.settingsEveryMs <= 0 || nowMs - slot.settingsAtMs >= this.settingsEveryMs || nowMs < slot.settingsAtMs) {
      slot.settings = readSettings(this.lib.fns, slot.handle);
      slot.settingsAtMs = nowMs;
    }
    return slot.settings;
  }

  /** Per-process SM % when it is due (the means stay in slot.util until the next read); else the last read's. */
  private smFor(slot: DeviceSlot): string | null {
    const everyMs = this.sm.periodMs(slot.index, (shown) => this.slots.filter((s) => s.handle !== null && this.sm.isShown(s.index) === shown).length);
    if (everyMs === null) return SM_NOT_READ;
    const nowMs = everyMs > 0 ? this.nowMs() : 0;
    if (!smDue(slot.smAtMs, nowMs, everyMs)) return slot.noSm;
    // A GPU that comes on screen is read at once; its first mean covers the time since the slow read before.
    slot.noSm = this.sm.timed(() => readSmUtilization(this.lib.fns.processUtilization, slot.util, slot.handle));
    slot.smAtMs = nowMs;
    return slot.noSm;
  }

  /**
   * Total energy of every readable device now, by device index (null where it cannot be read): what /metrics
   * exports at scrape time when samples do not carry it (NvmlFields.energy false).
   */
  readTotalEnergyMj(): Map<number, number | null> {
    const out = new Map<number, number | null>();
    for (const slot of this.slots) {
      if (slot.handle === null) continue;
      try {
        out.set(slot.index, readTotalEnergyMj(this.lib.fns, slot.handle, {}));
      } catch (err) {
        if (!(err instanceof DeviceUnreadable)) throw err;
        out.set(slot.index, null);
      }
    }
    return out;
  }

  /** Compute mode of a MIG GPU, read through its first MIG device (the parent handle answers NOT_SUPPORTED). */
  private readMigComputeMode(device: Device, migHandle: DeviceHandle): void {
    if (device.computeMode !== null) return;
    const scratch: Unavailable = {};
    const mode = readUint(this.lib.fns.computeMode, 'nvmlDeviceGetComputeMode', 'computeMode', scratch, migHandle);
    if (mode === null) return;
    device.computeMode = computeModeName(mode);
    delete device.unavailable.computeMode;
  }

  private readProcesses(slot: DeviceSlot, device: Device): GpuProcess[] {
    const fns = this.lib.fns;
    const total = device.memory.totalBytes;
    const compute = readProcessList(fns.computeProcesses, slot.compute, slot.handle, total);
    const graphics = readProcessList(fns.graphicsProcesses, slot.graphics, slot.handle, total);
    if (!('entries' in compute)) device.unavailable['processes.compute'] = compute.reason;
    if (!('entries' in graphics)) device.unavailable['processes.graphics'] = graphics.reason;
    const computeEntries = 'entries' in compute ? compute.entries : [];
    const graphicsEntries = 'entries' in graphics ? graphics.entries : [];
    if (computeEntries.length === 0 && graphicsEntries.length === 0) {
      slot.rows = null;
      return NO_ROWS;
    }
    const readsBefore = slot.util.reads;
    const noSm = this.smFor(slot);
    if (noSm === null && slot.util.reads !== readsBefore) {
      slot.util.idleUnlessSampled([...computeEntries.map((e) => e.pid), ...graphicsEntries.map((e) => e.pid)]);
    }
    const listsUnchanged = 'unchanged' in compute && compute.unchanged && 'unchanged' in graphics && graphics.unchanged;
    if (listsUnchanged && slot.rows !== null && sameSm(slot.rows, slot.util, noSm)) return slot.rows;
    const rows = new Map<string | number, GpuProcess>();
    const gpu = { uuid: device.uuid, index: device.index };
    mergeEntries(rows, computeEntries, 'compute', gpu);
    mergeEntries(rows, graphicsEntries, 'graphics', gpu);
    for (const row of rows.values()) {
      const pct = noSm === null ? slot.util.meanOf(row.pid) : undefined;
      if (pct === undefined) row.unavailable.smUtilPct = smReason(noSm);
      else row.smUtilPct = pct;
    }
    const out = keepSameRows([...rows.values()], slot.rows);
    slot.rows = 'entries' in compute && 'entries' in graphics ? out : null;
    return out;
  }
}

/**
 * `rows` with each row that reads as the previous sample's row at the same place replaced by that very object.
 * While training runs, one row of a GPU moves at a time; the others then stay the same objects, so everything
 * downstream (the host facts, the comparison with the sample on screen, a recording's delta) tells them
 * unchanged by identity instead of comparing every field of every row again.
 */
function keepSameRows(rows: GpuProcess[], previous: readonly GpuProcess[] | null): GpuProcess[] {
  if (previous === null) return rows;
  const n = Math.min(rows.length, previous.length);
  for (let i = 0; i < n; i++) {
    const before = previous[i] as GpuProcess;
    if (sameNvmlRow(before, rows[i] as GpuProcess)) rows[i] = before;
  }
  return rows;
}

/** Whether two rows built by readProcesses (host null, name null) read the same. */
function sameNvmlRow(a: GpuProcess, b: GpuProcess): boolean {
  if (a.pid !== b.pid || a.usedBytes !== b.usedBytes || a.smUtilPct !== b.smUtilPct || a.kind !== b.kind) return false;
  if (a.gpuInstanceId !== b.gpuInstanceId || a.computeInstanceId !== b.computeInstanceId || a.gpuUuid !== b.gpuUuid) return false;
  for (const k in b.unavailable) if (a.unavailable[k] !== b.unavailable[k]) return false;
  for (const k in a.unavailable) if (!(k in b.unavailable)) return false;
  return true;
}

/** Why a row has no SM %: the reason for the whole device, or no sample for that pid. */
const smReason = (noSm: string | null): string => noSm ?? 'no utilization sample for this pid';

/** Whether every row's SM % (or the reason it has none) is what the last utilization read gives. */
function sameSm(rows: readonly GpuProcess[], util: UtilBuffer, noSm: string | null): boolean {
  for (const row of rows) {
    const pct = noSm === null ? util.meanOf(row.pid) : undefined;
    if (pct === undefined ? row.smUtilPct !== null || row.unavailable.smUtilPct !== smReason(noSm) : row.smUtilPct !== pct) return false;
  }
  return true;
}

/**
 * Opens the NVML source: loads the library (option, env GPUMEM_NVML_LIB, or libnvidia-ml.so.1),
 * initialises NVML and resolves the device count. Throws GpumemError NO_GPU_ACCESS or NVML_ERROR,
 * naming the path tried and the NVML return code, with a hint.
 */
export function openNvmlSource(options: NvmlSourceOptions = {}): NvmlSource {
  return new NvmlSource(options);
}
