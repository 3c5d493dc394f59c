/**
 * `nvidia-smi --query-gpu=… --format=csv` and `--query-compute-apps=…` → the model. Any subset and order of
 * fields works; what the query did not ask for is null with reason "not queried".
 */
import { GpumemError } from '../../core/errors.js';
import type { Device, GpuProcess } from '../../core/types.js';
import { parseSmiCsv, type CsvCell } from './csv.js';
import { collector, readBytes, readNumber, readPowerMw, readText, type Read } from './values.js';

const NOT_QUERIED = 'not in the nvidia-smi query';

function cellReader(row: Map<string, CsvCell>) {
  return (field: string, read: (raw: string, unit: string | undefined) => Read<number | string>): Read<never> | Read<number | string> => {
    const cell = row.get(field);
    return cell === undefined ? { value: null, reason: NOT_QUERIED } : read(cell.raw, cell.unit);
  };
}

const bytes = (raw: string, unit: string | undefined): Read<number> => readBytes(raw, unit);
const percent = (raw: string): Read<number> => readNumber(raw, ['%']);
const plain = (raw: string): Read<number> => readNumber(raw);
const watts = (raw: string): Read<number> => readPowerMw(raw);
const text = (raw: string): Read<string> => readText(raw);

/**
 * Parses `--query-gpu` CSV into one Device per row. The index comes from the `index` field when queried,
 * else from the row position (nvidia-smi prints rows in index order). Throws GpumemError('INPUT_MALFORMED')
 * when no memory.* field was queried (there would be nothing to report) or a row is cut off.
 */
export function parseQueryGpuCsv(csv: string): Device[] {
  const table = parseSmiCsv(csv, 'nvidia-smi --query-gpu CSV');
  if (!table.columns.some((c) => c.startsWith('memory.'))) {
    throw new GpumemError('INPUT_MALFORMED', 'nvidia-smi --query-gpu CSV: no memory.total/used/free/reserved field in the header', {
      hint: 'query at least memory.total,memory.reserved,memory.used,memory.free',
    });
  }
  return table.rows.map((row, position) => {
    const unavailable: Record<string, string> = {};
    const take = collector(unavailable);
    const cell = cellReader(row);
    const num = (field: string, read: (raw: string, unit: string | undefined) => Read<number>, key: string): number | null =>
      take(cell(field, read) as Read<number>, key);
    const str = (field: string, key: string): string | null => take(cell(field, text) as Read<string>, key);
    const index = num('index', plain, 'index') ?? position;
    delete unavailable.index;
    const mig = str('mig.mode.current', 'migMode');
    const migMode = mig === null ? null : mig.toLowerCase() === 'enabled' ? 'enabled' : mig.toLowerCase() === 'disabled' ? 'disabled' : null;
    if (mig !== null && migMode === null) unavailable.migMode = `unknown MIG mode "${mig}"`;
    unavailable.migInstances = 'not in nvidia-smi --query-gpu output';
    const device: Device = {
      index,
      uuid: str('uuid', 'uuid'),
      name: str('name', 'name'),
      pciBusId: str('pci.bus_id', 'pciBusId'),
      minorNumber: null,
      status: 'ok',
      memory: {
        totalBytes: num('memory.total', bytes, 'memory.totalBytes'),
        reservedBytes: num('memory.reserved', bytes, 'memory.reservedBytes'),
        usedBytes: num('memory.used', bytes, 'memory.usedBytes'),
        freeBytes: num('memory.free', bytes, 'memory.freeBytes'),
      },
      utilization: {
        gpuPct: num('utilization.gpu', percent, 'utilization.gpuPct'),
        memoryPct: num('utilization.memory', percent, 'utilization.memoryPct'),
      },
      temperatureC: num('temperature.gpu', plain, 'temperatureC'),
      powerDrawMw: num('power.draw.average', watts, 'powerDrawMw') ?? num('power.draw.instant', watts, 'powerDrawMw') ?? num('power.draw', watts, 'powerDrawMw'),
      powerLimitMw: num('enforced.power.limit', watts, 'powerLimitMw') ?? num('power.limit', watts, 'powerLimitMw'),
      computeMode: str('compute_mode', 'computeMode'),
      migMode,
      migInstances: [],
      driverVersion: str('driver_version', 'driverVersion'),
      cudaDriverVersion: null,
      unavailable,
    };
    if (device.powerDrawMw !== null) delete unavailable.powerDrawMw;
    if (device.powerLimitMw !== null) delete unavailable.powerLimitMw;
    unavailable.minorNumber = 'not in nvidia-smi --query-gpu output';
    unavailable.cudaDriverVersion = 'not in nvidia-smi --query-gpu output';
    return device;
  });
}

/**
 * Parses `--query-compute-apps` CSV (needs `pid`; `gpu_uuid`, `used_gpu_memory`/`used_memory` and
 * `process_name` when queried) into compute processes. `devices` maps a gpu_uuid to its index. Throws
 * GpumemError('INPUT_MALFORMED') when the pid column is missing or a pid is not a positive integer.
 */
export function parseComputeAppsCsv(csv: string, devices: readonly Device[] = []): GpuProcess[] {
  const table = parseSmiCsv(csv, 'nvidia-smi --query-compute-apps CSV');
  if (!table.columns.includes('pid')) {
    throw new GpumemError('INPUT_MALFORMED', 'nvidia-smi --query-compute-apps CSV: no pid field in the header', {
      hint: 'query at least pid,gpu_uuid,used_gpu_memory',
    });
  }
  return table.rows.map((row, i) => {
    const unavailable: Record<string, string> = {};
    const take = collector(unavailable);
    const cell = cellReader(row);
    const pid = cell('pid', plain);
    if (typeof pid.value !== 'number' || !Number.isInteger(pid.value) || pid.value <= 0) {
      throw new GpumemError('INPUT_MALFORMED', `nvidia-smi --query-compute-apps CSV: bad pid "${row.get('pid')?.raw}" (line ${i + 2})`, {
        hint: 'the output may be truncated; run the query by hand to check it',
      });
    }
    const gpuUuid = take(cell('gpu_uuid', text) as Read<string>, 'gpuUuid');
    const device = devices.find((d) => d.uuid !== null && d.uuid === gpuUuid);
    return {
      pid: pid.value,
      gpuUuid,
      gpuIndex: device?.index ?? null,
      gpuInstanceId: null,
      computeInstanceId: null,
      usedBytes: take(cell('used_gpu_memory', bytes) as Read<number>, 'usedBytes'),
      kind: 'compute',
      name: take(cell('process_name', text) as Read<string>, 'name'),
      smUtilPct: null,
      host: null,
      unavailable: { ...unavailable, smUtilPct: 'not in nvidia-smi output', gpuInstanceId: 'not in nvidia-smi CSV output' },
    };
  });
}
