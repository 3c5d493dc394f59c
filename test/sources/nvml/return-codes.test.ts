/** Every NVML return code has its name and a hint; unknown codes still produce a usable name. */
import { describe, expect, it } from 'vitest';
import { knownNvmlReturnCodes, nvmlReturnHint, nvmlReturnName } from '../../../src/sources/nvml/return-codes.js';

describe('NVML return codes', () => {
  it('names 0–30 and 999 as nvml.h does', () => {
    const codes = knownNvmlReturnCodes();
    for (let c = 0; c <= 30; c++) expect(codes).toContain(c);
    expect(nvmlReturnName(0)).toBe('NVML_SUCCESS');
    expect(nvmlReturnName(15)).toBe('NVML_ERROR_GPU_IS_LOST');
    expect(nvmlReturnName(25)).toBe('NVML_ERROR_ARGUMENT_VERSION_MISMATCH');
    expect(nvmlReturnName(999)).toBe('NVML_ERROR_UNKNOWN');
    expect(nvmlReturnName(31)).toBe('NVML_ERROR_31');
  });

  it('gives every error code a non-empty hint', () => {
    for (const c of knownNvmlReturnCodes().filter((c) => c !== 0)) expect(nvmlReturnHint(c).length).toBeGreaterThan(10);
    expect(nvmlReturnHint(4)).toMatch(/permission|allowed/i);
  });
});
