/**
 * `nvidia-smi -q -x` → the Device / GpuProcess model. Element names changed across the v11/v12/v13 DTDs
 * (power_readings → gpu_power_readings, power_draw → average/instant_power_draw); each field lists the
 * names it accepts in the order that matches NVML's own value.
 */
import { GpumemError } from '../../core/errors.js';
import type { Device, DeviceMemory, GpuProcess, GpuProcessKind, MigInstance } from '../../core/types.js';
import { child, childrenNamed, parseXml, textAt, type XmlElement } from './xml.js';
import { collector, readBytes, readNumber, readPowerMw, readText, type Read } from './values.js';

export interface SmiXmlResult {
  devices: Device[];
  processes: GpuProcess[];
  driverVersion: string | null;
  cudaVersion: string | null;
  /** `attached_gpus` as printed; may exceed devices.length when output was trimmed. */
  attachedGpus: number | null;
  /** Sample-level notes: field → reason (e.g. fewer <gpu> blocks than attached_gpus). */
  unavailable: Record<string, string>;
}

/** First of several alternative paths that is present. */
function firstText(element: XmlElement | undefined, paths: readonly string[][]): string | undefined {
  for (const path of paths) {
    const t = textAt(element, ...path);
    if (t !== undefined) return t;
  }
  return undefined;
}

/**
 * Power draw as nvidia-smi's `power.draw` shows it: the averaged reading, and where the driver reports that
 * as N/A (pre-Ampere GPUs on R530+ drivers) the instant one. Older drivers have a single `power_draw`.
 */
function readPowerDraw(power: XmlElement | undefined): Read<number> {
  let first: Read<number> | undefined;
  for (const name of ['power_draw', 'average_power_draw', 'instant_power_draw']) {
    const text = textAt(power, name);
    if (text === undefined) continue;
    const read = readPowerMw(text);
    if (read.value !== null) return read;
    first ??= read;
  }
  return first ?? readPowerMw(undefined);
}

function readMemory(block: XmlElement | undefined, unavailable: Record<string, string>, prefix: string): DeviceMemory {
  const take = collector(unavailable);
  const reservedText = textAt(block, 'reserved');
  const reserved: Read<number> =
    block && reservedText === undefined ? { value: null, reason: 'not reported by this driver (reserved memory is split out from R510 on)' } : readBytes(reservedText);
  return {
    totalBytes: take(readBytes(textAt(block, 'total')), `${prefix}totalBytes`),
    reservedBytes: take(reserved, `${prefix}reservedBytes`),
    usedBytes: take(readBytes(textAt(block, 'used')), `${prefix}usedBytes`),
    freeBytes: take(readBytes(textAt(block, 'free')), `${prefix}freeBytes`),
  };
}

function readMig(gpu: XmlElement): MigInstance[] {
  return childrenNamed(child(gpu, 'mig_devices'), 'mig_device').map((mig, i) => {
    const unavailable: Record<string, string> = {};
    const gi = readNumber(textAt(mig, 'gpu_instance_id'));
    const ci = readNumber(textAt(mig, 'compute_instance_id'));
    if (gi.value === null) throw missing(`mig_device ${i}: gpu_instance_id (${gi.reason})`);
    unavailable.uuid = 'not in nvidia-smi -q -x output';
    unavailable.profile = 'not in nvidia-smi -q -x output';
    if (ci.value === null) unavailable.computeInstanceId = ci.reason;
    return {
      gpuInstanceId: gi.value,
      computeInstanceId: ci.value,
      uuid: null,
      profile: null,
      memory: readMemory(child(mig, 'fb_memory_usage'), unavailable, 'memory.'),
      unavailable,
    };
  });
}

function missing(what: string): GpumemError {
  return new GpumemError('INPUT_MALFORMED', `nvidia-smi XML: missing or unreadable ${what}`, {
    hint: 'the output may be truncated; run `nvidia-smi -q -x` by hand to check it',
  });
}

function readDevice(gpu: XmlElement, index: number, driverVersion: string | null, cudaVersion: string | null): Device {
  const unavailable: Record<string, string> = {};
  const take = collector(unavailable);
  const fb = child(gpu, 'fb_memory_usage');
  if (!fb) throw missing(`<fb_memory_usage> of GPU ${index}`);
  const power = child(gpu, 'gpu_power_readings') ?? child(gpu, 'power_readings');
  const mig = textAt(gpu, 'mig_mode', 'current_mig');
  const migRead = readText(mig);
  const migMode = migRead.value === null ? null : migRead.value.toLowerCase() === 'enabled' ? 'enabled' : migRead.value.toLowerCase() === 'disabled' ? 'disabled' : null;
  if (migMode === null) unavailable.migMode = migRead.reason ?? `unknown MIG mode "${mig}"`;
  const device: Device = {
    index,
    uuid: take(readText(textAt(gpu, 'uuid')), 'uuid'),
    name: take(readText(textAt(gpu, 'product_name')), 'name'),
    pciBusId: take(readText(gpu.attrs.id ?? textAt(gpu, 'pci', 'pci_bus_id')), 'pciBusId'),
    minorNumber: take(readNumber(textAt(gpu, 'minor_number')), 'minorNumber'),
    status: 'ok',
    memory: readMemory(fb, unavailable, 'memory.'),
    utilization: {
      gpuPct: take(readNumber(textAt(gpu, 'utilization', 'gpu_util'), ['%']), 'utilization.gpuPct'),
      memoryPct: take(readNumber(textAt(gpu, 'utilization', 'memory_util'), ['%']), 'utilization.memoryPct'),
    },
    temperatureC: take(readNumber(textAt(gpu, 'temperature', 'gpu_temp'), ['C']), 'temperatureC'),
    powerDrawMw: take(readPowerDraw(power), 'powerDrawMw'),
    powerLimitMw: take(readPowerMw(firstText(power, [['enforced_power_limit'], ['current_power_limit'], ['power_limit']])), 'powerLimitMw'),
    computeMode: take(readText(textAt(gpu, 'compute_mode')), 'computeMode'),
    migMode,
    migInstances: readMig(gpu),
    driverVersion,
    cudaDriverVersion: cudaVersion,
    unavailable,
  };
  if (driverVersion === null) unavailable.driverVersion = 'missing from nvidia-smi output';
  if (cudaVersion === null) unavailable.cudaDriverVersion = 'missing from nvidia-smi output';
  return device;
}

const KINDS: Record<string, GpuProcessKind> = { C: 'compute', G: 'graphics', 'C+G': 'compute+graphics' };

function readProcesses(gpu: XmlElement, device: Device): GpuProcess[] {
  return childrenNamed(child(gpu, 'processes'), 'process_info').map((p) => {
    const unavailable: Record<string, string> = {};
    const take = collector(unavailable);
    const pid = readNumber(textAt(p, 'pid'));
    if (pid.value === null || !Number.isInteger(pid.value) || pid.value <= 0) {
      throw missing(`pid of a process on GPU ${device.index} (${textAt(p, 'pid') ?? 'absent'})`);
    }
    const type = textAt(p, 'type')?.trim() ?? '';
    const gi = readNumber(textAt(p, 'gpu_instance_id'));
    const ci = readNumber(textAt(p, 'compute_instance_id'));
    return {
      pid: pid.value,
      gpuUuid: device.uuid,
      gpuIndex: device.index,
      gpuInstanceId: gi.value,
      computeInstanceId: ci.value,
      usedBytes: take(readBytes(textAt(p, 'used_memory')), 'usedBytes'),
      kind: KINDS[type] ?? 'compute',
      name: take(readText(textAt(p, 'process_name')), 'name'),
      smUtilPct: null,
      host: null,
      unavailable: { ...unavailable, smUtilPct: 'not in nvidia-smi -q -x output' },
    };
  });
}

/**
 * Parses the text of `nvidia-smi -q -x` into devices (index = position, which is nvidia-smi's index order)
 * and their processes. Throws GpumemError('INPUT_MALFORMED') when the text is not XML, is cut off, is not
 * an nvidia_smi_log, or lacks a GPU's memory block or a process pid.
 */
export function parseSmiXml(text: string): SmiXmlResult {
  const root = parseXml(text);
  if (root.name !== 'nvidia_smi_log') throw missing(`<nvidia_smi_log> root (found <${root.name}>)`);
  const driverVersion = readText(textAt(root, 'driver_version')).value;
  const cudaVersion = readText(textAt(root, 'cuda_version')).value;
  const attachedGpus = readNumber(textAt(root, 'attached_gpus')).value;
  const gpus = childrenNamed(root, 'gpu');
  const devices = gpus.map((gpu, i) => readDevice(gpu, i, driverVersion, cudaVersion));
  const processes = gpus.flatMap((gpu, i) => readProcesses(gpu, devices[i]!));
  const unavailable: Record<string, string> = {};
  if (attachedGpus !== null && attachedGpus > devices.length) {
    unavailable.devices = `nvidia-smi reports ${attachedGpus} attached GPUs but its output holds ${devices.length}`;
  }
  return { devices, processes, driverVersion, cudaVersion, attachedGpus, unavailable };
}
