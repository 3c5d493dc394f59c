/**
 * Power, clocks and energy. Power follows nvidia-smi's power.draw: nvmlDeviceGetPowerUsage (averaged over
 * a second on Ampere and newer), and where a driver answers that with NOT_SUPPORTED — pre-Ampere GPUs on
 * R530+ drivers, whose averaged reading is N/A — the instant reading from the field-value API
 * (NVML_FI_DEV_POWER_INSTANT), as nvidia-smi falls back to `instant_power_draw`.
 */
import type { Unavailable } from '../../core/types.js';
import { callReason, invoke, readUint, scratchStruct } from './calls.js';
import { FI_DEV_POWER_INSTANT, FIELD_VALUE } from './layouts.js';
import type { DeviceHandle, NvmlFunctions } from './library.js';
import { NVML_SUCCESS } from './return-codes.js';

const NVML_CLOCK_SM = 1;
const NVML_CLOCK_MEM = 2;
const energyOut = new BigUint64Array(1);

/** Power draw in mW, averaged where the driver has it and instant otherwise; null with both reasons. */
export function readPowerDrawMw(fns: NvmlFunctions, handle: DeviceHandle, unavailable: Unavailable): number | null {
  const averaged = readUint(fns.powerUsage, 'nvmlDeviceGetPowerUsage', 'powerDrawMw', unavailable, handle);
  if (averaged !== null) return averaged;
  const first = unavailable.powerDrawMw;
  const field: Unavailable = {};
  scratchStruct.fill(0, 0, FIELD_VALUE.size);
  scratchStruct.writeUInt32LE(FI_DEV_POWER_INSTANT, FIELD_VALUE.fieldId);
  if (!invoke(fns.fieldValues, 'nvmlDeviceGetFieldValues', 'powerDrawMw', field, [handle, 1, scratchStruct])) {
    unavailable.powerDrawMw = `${first}; instant: ${field.powerDrawMw}`;
    return null;
  }
  const rc = scratchStruct.readInt32LE(FIELD_VALUE.nvmlReturn);
  if (rc !== NVML_SUCCESS) {
    unavailable.powerDrawMw = `${first}; instant: ${callReason('NVML_FI_DEV_POWER_INSTANT', rc)}`;
    return null;
  }
  delete unavailable.powerDrawMw;
  return scratchStruct.readUInt32LE(FIELD_VALUE.value);
}

/** Current SM and memory clocks in MHz. */
export function readClocks(fns: NvmlFunctions, handle: DeviceHandle, unavailable: Unavailable): { smMhz: number | null; memoryMhz: number | null } {
  return {
    smMhz: readUint(fns.clockInfo, 'nvmlDeviceGetClockInfo', 'clocks.smMhz', unavailable, handle, NVML_CLOCK_SM),
    memoryMhz: readUint(fns.clockInfo, 'nvmlDeviceGetClockInfo', 'clocks.memoryMhz', unavailable, handle, NVML_CLOCK_MEM),
  };
}

/** Energy since the driver loaded, in mJ. */
export function readTotalEnergyMj(fns: NvmlFunctions, handle: DeviceHandle, unavailable: Unavailable): number | null {
  energyOut[0] = 0n;
  if (!invoke(fns.totalEnergy, 'nvmlDeviceGetTotalEnergyConsumption', 'totalEnergyMj', unavailable, [handle, energyOut])) return null;
  return Number(energyOut[0]);
}

