import { describe, expect, it } from 'vitest';
import { admitCompanionMessage, COMPANION_LIMITS, createCompanionIntake, parseCompanionLine, type CompanionMessage } from '../../../src/core/companion/index.js';

const error = (pid: number, what: string, message: string): CompanionMessage => ({ schemaVersion: 1, type: 'error', pid, timeMs: 1, what, message });

describe('companion intake limits', () => {
  it('keeps at most errorsPerProcess features per process, cuts long texts, counts the rest', () => {
    const intake = createCompanionIntake();
    for (let i = 0; i < 40; i++) admitCompanionMessage(intake, error(7, `f${i}`, 'y'.repeat(10_000)));
    const p = intake.state.get(7)!;
    expect(p.errors.size).toBe(COMPANION_LIMITS.errorsPerProcess);
    expect(intake.drops.overKindLimit.error).toBe(40 - COMPANION_LIMITS.errorsPerProcess);
    expect(intake.drops.textsCut).toBe(40);
    for (const m of p.errors.values()) expect(m.length).toBeLessThan(COMPANION_LIMITS.textChars + 100);
    // A repeated feature replaces its entry: no growth, no drop.
    admitCompanionMessage(intake, error(7, 'f0', 'again'));
    expect(p.errors.get('f0')).toBe('again');
    expect(intake.drops.overKindLimit.error).toBe(40 - COMPANION_LIMITS.errorsPerProcess);
  });

  it('keeps at most `processes` pids and stops at the total bytes kept', () => {
    const intake = createCompanionIntake();
    for (let pid = 2; pid < 2 + COMPANION_LIMITS.processes + 10; pid++) admitCompanionMessage(intake, error(pid, 'x', 'z'.repeat(1500)));
    expect(intake.state.size).toBe(COMPANION_LIMITS.processes);
    expect(intake.drops.overKindLimit.process).toBe(10);
    const big = createCompanionIntake();
    let kept = 0;
    for (let i = 0; i < 20_000; i++) if (admitCompanionMessage(big, { schemaVersion: 1, type: 'exception', pid: 9, timeMs: 1, oom: true, exceptionType: 'E', message: 'm'.repeat(8000) })) kept++;
    expect(big.keptBytes).toBeLessThanOrEqual(COMPANION_LIMITS.keptBytes);
    expect(kept).toBe(20_000 - big.drops.overTotalBytes);
    expect(big.state.get(9)!.oomExceptions.length).toBeLessThanOrEqual(64);
  });

  it('refuses a CUDA ordinal above 1023 and a device list longer than 1024', () => {
    const line = (device: number): string => JSON.stringify({ schemaVersion: 1, type: 'oom', pid: 5, timeMs: 1, source: 'observer', device, requestedBytes: 1, deviceLimitBytes: 1, deviceFreeBytes: 1, stats: null, snapshotPath: null, snapshotError: null });
    expect(parseCompanionLine(line(1023))).toMatchObject({ device: 1023 });
    expect(() => parseCompanionLine(line(2147483648))).toThrow(/ordinal 2147483648 is above 1023/);
    const devices = Array.from({ length: 1025 }, (_, i) => ({ device: i % 1000, uuid: null, name: null, totalBytes: null }));
    expect(() => parseCompanionLine(JSON.stringify({ schemaVersion: 1, type: 'devices', pid: 5, timeMs: 1, devices }))).toThrow(/1025 devices listed/);
  });
});
