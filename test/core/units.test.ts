import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, formatPercent, GpumemError, parseByteSize } from '../../src/core/index.js';

describe('formatBytes', () => {
  it('uses IEC units', () => {
    expect(formatBytes(0)).toBe('0 B');
    // Fractional values (a chart's half-way tick) format like any other number.
    expect(formatBytes(0.5)).toBe('1 B');
    expect(formatBytes(1536.5)).toBe('1.50 KiB');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1.00 KiB');
    expect(formatBytes(81559 * 1024 * 1024)).toBe('79.65 GiB');
    expect(formatBytes(2n ** 60n)).toBe('1.00 EiB');
    expect(formatBytes(-2048)).toBe('-2.00 KiB');
  });
  it('prints unknown as n/a, never 0', () => {
    expect(formatBytes(null)).toBe('n/a');
    expect(formatBytes(undefined)).toBe('n/a');
  });
});

describe('parseByteSize', () => {
  it('refuses a size past 2^53 bytes (it would no longer be a whole number of bytes)', () => {
    expect(() => parseByteSize('99999999999999999999TiB', '--request')).toThrow(/--request: "99999999999999999999TiB" is too large/);
    expect(() => parseByteSize('8192TiB')).toThrow(/too large/);
    expect(parseByteSize('8191TiB')).toBe(8191 * 1024 ** 4);
  });

  it('reads binary units', () => {
    expect(parseByteSize('512')).toBe(512);
    expect(parseByteSize('20MiB')).toBe(20 * 1024 ** 2);
    expect(parseByteSize('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize('80GB')).toBe(80 * 1024 ** 3);
  });
  it('rejects garbage with a usage error', () => {
    expect(() => parseByteSize('lots')).toThrow(GpumemError);
    expect(() => parseByteSize('12 parsecs')).toThrow(/cannot read/);
  });
  it('round-trips whole MiB values through the formatter', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1023 }), (mib) => {
        expect(parseByteSize(`${mib}MiB`)).toBe(mib * 1024 * 1024);
      }),
    );
  });
});

describe('formatDuration / formatPercent', () => {
  it('formats', () => {
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(12_340)).toBe('12.3s');
    expect(formatDuration(245_000)).toBe('4m05s');
    expect(formatDuration(3 * 3600_000 + 12 * 60_000)).toBe('3h12m');
    expect(formatPercent(42.4)).toBe('42%');
    expect(formatPercent(null)).toBe('n/a');
  });
});
