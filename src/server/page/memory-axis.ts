/**
 * The live memory chart's y axis: from 0 to the largest capacity of the GPUs seen, so a 48 GiB card's axis
 * ends at 48 (uPlot's automatic range rounds up past it, to 80, and the line never nears the top it implies).
 */
const GiB = 1024 ** 3;

let capacityGiB = 0;

/** Notes one GPU's capacity (bytes; null when unknown). */
export function noteCapacity(totalBytes: number | null): void {
  if (totalBytes) capacityGiB = Math.max(capacityGiB, totalBytes / GiB);
}

/** The axis range for data whose largest value is `dataMax` GiB (above the capacity only if the data is). */
export function memoryRange(dataMax: number | null): [number, number] {
  return [0, Math.max(dataMax ?? 0, capacityGiB) || 1];
}
