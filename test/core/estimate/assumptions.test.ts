import { describe, expect, it } from 'vitest';
import { CONTEXT_HIGH_BYTES, CONTEXT_LOW_BYTES, DEFAULT_ENVIRONMENT, DEFAULT_SETUP, configAssumptions } from '../../../src/core/estimate/index.js';

const GiB = 1024 ** 3;

describe('config-only assumptions', () => {
  it('gives the peak a range over the CUDA context sizes reported, around the assumed context', () => {
    const env = { ...DEFAULT_ENVIRONMENT, contextBytes: 512 * 1024 * 1024 };
    const r = configAssumptions(DEFAULT_SETUP, env, 10 * GiB, false);
    expect(r.peakRangeBytes.lowBytes).toBe(10 * GiB - env.contextBytes + CONTEXT_LOW_BYTES);
    expect(r.peakRangeBytes.highBytes).toBe(10 * GiB - env.contextBytes + CONTEXT_HIGH_BYTES);
    expect(r.assumptions.some((a) => a.startsWith('CUDA context 512 MiB assumed'))).toBe(true);
  });

  it('a context given with --context is not a guess: no range, no context assumption', () => {
    const r = configAssumptions(DEFAULT_SETUP, DEFAULT_ENVIRONMENT, 10 * GiB, true);
    expect(r.peakRangeBytes).toEqual({ lowBytes: 10 * GiB, highBytes: 10 * GiB });
    expect(r.assumptions.some((a) => a.includes('CUDA context'))).toBe(false);
  });

  it('names the float32 islands under autocast, and how gradients live with and without accumulation', () => {
    const amp = configAssumptions({ ...DEFAULT_SETUP, precision: 'amp-bf16' }, DEFAULT_ENVIRONMENT, GiB, true).assumptions;
    expect(amp.some((a) => a.startsWith('autocast:'))).toBe(true);
    expect(configAssumptions(DEFAULT_SETUP, DEFAULT_ENVIRONMENT, GiB, true).assumptions.some((a) => a.startsWith('autocast:'))).toBe(false);
    const accum = configAssumptions({ ...DEFAULT_SETUP, accumulation: 4 }, DEFAULT_ENVIRONMENT, GiB, true).assumptions;
    expect(accum.some((a) => a.includes('first micro-batch'))).toBe(true);
  });
});
