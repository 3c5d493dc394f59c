/**
 * Device metrics under dcgm-exporter's names, types, units and labels (its etc/default-counters.csv), so
 * dashboards built for dcgm-exporter read gpumem unchanged. Each value equals the nvidia-smi field named
 * in its help; a value gpumem could not read is left out (no sample), never exported as 0.
 */
import { MiB } from '../../core/units.js';
import type { Device } from '../../core/types.js';
import type { ServerSnapshot } from '../snapshot.js';
import type { HostLabel, MetricDef, MetricsContext, Row } from './define.js';

/**
 * dcgm-exporter's label set for one GPU (or one MIG instance: GPU_I_PROFILE and GPU_I_ID added), with the host
 * label spelled as the dcgm-exporter a fleet already runs spells it.
 */
export function deviceLabels(device: Device, hostname: string, hostLabel: HostLabel): Record<string, string> {
  return {
    gpu: String(device.index),
    UUID: device.uuid ?? '',
    pci_bus_id: device.pciBusId ?? '',
    device: device.minorNumber === null ? '' : `nvidia${device.minorNumber}`,
    modelName: device.name ?? '',
    [hostLabel]: hostname,
    DCGM_FI_DRIVER_VERSION: device.driverVersion ?? '',
  };
}

/** MiB rounded down, as nvidia-smi prints them and DCGM reports them. */
const mib = (bytes: number | null): number | null => (bytes === null ? null : Math.floor(bytes / MiB));

type DeviceValue = (d: Device) => number | null;

function perDevice(value: DeviceValue, withMig?: (m: Device['migInstances'][number]) => number | null) {
  return (s: ServerSnapshot, c: MetricsContext): Row[] => {
    const rows: Row[] = [];
    for (const d of s.sample.devices) {
      const base = deviceLabels(d, s.hostname, c.hostLabel);
      if (withMig && d.migInstances.length > 0) {
        for (const m of d.migInstances) {
          const v = withMig(m);
          if (v !== null) rows.push([{ ...base, GPU_I_PROFILE: m.profile ?? '', GPU_I_ID: String(m.gpuInstanceId) }, v]);
        }
        continue;
      }
      const v = value(d);
      if (v !== null) rows.push([base, v]);
    }
    return rows;
  };
}

/** As declared; `hostname` goes out as `Hostname` under --host-label Hostname. */
const DEVICE_LABELS = ['gpu', 'UUID', 'pci_bus_id', 'device', 'modelName', 'hostname', 'DCGM_FI_DRIVER_VERSION'];
const MIG_LABELS = [...DEVICE_LABELS, 'GPU_I_PROFILE', 'GPU_I_ID'];

/** The dcgm-exporter metrics gpumem can fill from NVML or nvidia-smi. */
export const DCGM_METRICS: readonly MetricDef[] = [
  {
    name: 'DCGM_FI_DEV_FB_USED', type: 'gauge', labels: MIG_LABELS,
    help: 'Framebuffer memory used (in MiB). nvidia-smi memory.used.',
    rows: perDevice((d) => mib(d.memory.usedBytes), (m) => mib(m.memory.usedBytes)),
  },
  {
    name: 'DCGM_FI_DEV_FB_FREE', type: 'gauge', labels: MIG_LABELS,
    help: 'Framebuffer memory free (in MiB). nvidia-smi memory.free.',
    rows: perDevice((d) => mib(d.memory.freeBytes), (m) => mib(m.memory.freeBytes)),
  },
  {
    name: 'DCGM_FI_DEV_FB_RESERVED', type: 'gauge', labels: MIG_LABELS,
    help: 'Framebuffer memory reserved (in MiB). nvidia-smi memory.reserved.',
    rows: perDevice((d) => mib(d.memory.reservedBytes), (m) => mib(m.memory.reservedBytes)),
  },
  {
    name: 'DCGM_FI_DEV_GPU_UTIL', type: 'gauge', labels: DEVICE_LABELS,
    help: 'GPU utilization (in %). nvidia-smi utilization.gpu.',
    rows: perDevice((d) => d.utilization.gpuPct),
  },
  {
    name: 'DCGM_FI_DEV_MEM_COPY_UTIL', type: 'gauge', labels: DEVICE_LABELS,
    help: 'Memory utilization (in %). nvidia-smi utilization.memory.',
    rows: perDevice((d) => d.utilization.memoryPct),
  },
  {
    name: 'DCGM_FI_DEV_GPU_TEMP', type: 'gauge', labels: DEVICE_LABELS,
    help: 'GPU temperature (in C). nvidia-smi temperature.gpu.',
    rows: perDevice((d) => d.temperatureC),
  },
  {
    name: 'DCGM_FI_DEV_POWER_USAGE', type: 'gauge', labels: DEVICE_LABELS,
    help: 'Power draw (in W). nvidia-smi power.draw (the averaged reading, else the instant one).',
    rows: perDevice((d) => (d.powerDrawMw === null ? null : d.powerDrawMw / 1000)),
  },
  {
    name: 'DCGM_FI_DEV_SM_CLOCK', type: 'gauge', labels: DEVICE_LABELS,
    help: 'SM clock frequency (in MHz). nvidia-smi clocks.sm.',
    rows: perDevice((d) => d.clocks?.smMhz ?? null),
  },
  {
    name: 'DCGM_FI_DEV_MEM_CLOCK', type: 'gauge', labels: DEVICE_LABELS,
    help: 'Memory clock frequency (in MHz). nvidia-smi clocks.mem.',
    rows: perDevice((d) => d.clocks?.memoryMhz ?? null),
  },
  {
    name: 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', type: 'counter', openMetricsType: 'gauge', labels: DEVICE_LABELS,
    help: 'Total energy consumption since boot (in mJ). nvidia-smi total_energy_consumption.',
    rows: perDevice((d) => d.totalEnergyMj ?? null),
  },
];
