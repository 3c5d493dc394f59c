/**
 * How the parser reads values: numbers in decimal only, no empty string where a file or name goes (unless the
 * option declares what empty means), hints that suggest a value the option accepts, and the child command
 * after `--` checked before anything starts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { childCommand, parseArgs } from '../../src/cli/args.js';
import { findCommand } from '../../src/cli/table.js';
import { GpumemError } from '../../src/core/index.js';
import { runs } from '../helpers/fuzz.js';

const spec = (name: string) => findCommand(name)!;

function refusal(run: () => unknown): GpumemError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GpumemError);
    return error as GpumemError;
  }
  throw new Error('expected a refusal');
}

describe('numbers', () => {
  it('hex, binary and octal are refused with their decimal value in the hint', () => {
    for (const [text, decimal] of [['0x40', 64], ['0b101', 5], ['0o17', 15], ['0X10', 16]] as const) {
      const e = refusal(() => parseArgs(spec('runs'), ['--limit', text]));
      expect(e.code).toBe('BAD_OPTION_VALUE');
      expect(e.message).toBe(`--limit: "${text}" is not a decimal number`);
      expect(e.hint).toBe(`write it in decimal: --limit ${decimal}`);
    }
  });

  it('spaces, Infinity and the empty string are not numbers', () => {
    for (const text of [' 5', '5 ', '', 'Infinity', '-Infinity', '1_000', '5px']) {
      expect(refusal(() => parseArgs(spec('runs'), ['--limit', text])).message).toBe(`--limit: "${text}" is not a number`);
    }
  });

  it('plain decimals, signs and exponents are read', () => {
    expect(parseArgs(spec('runs'), ['--limit', '1e2']).options.limit).toBe(100);
    expect(parseArgs(spec('watch'), ['--speed', '.5']).options.speed).toBe(0.5);
    expect(parseArgs(spec('watch'), ['--speed', '+2.']).options.speed).toBe(2);
  });

  it('any decimal Number() reads is read the same way', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.0625, max: 64, noNaN: true }), (x) => {
        expect(parseArgs(spec('watch'), ['--speed', String(x)]).options.speed).toBe(x);
      }),
      { numRuns: runs(200) },
    );
  });

  it('the hint of a refused value suggests one the option accepts', () => {
    const run = spec('run');
    for (const bad of ['0', '1.5', '-1']) {
      const e = refusal(() => parseArgs(run, ['--memory-fraction', bad, '--', 'true']));
      const suggested = Number(/--memory-fraction (\S+)$/.exec(e.hint ?? '')?.[1]);
      expect(suggested).toBeGreaterThan(0);
      expect(suggested).toBeLessThanOrEqual(1);
      expect(parseArgs(run, ['--memory-fraction', String(suggested), '--', 'true']).options.memoryFraction).toBe(suggested);
    }
  });
});

describe('empty values and arguments', () => {
  it('an empty file name is refused', () => {
    const e = refusal(() => parseArgs(spec('status'), ['--replay', '']));
    expect(e.message).toBe('--replay: the value is empty');
    expect(e.hint).toMatch(/^give --replay FILE; /);
    expect(refusal(() => parseArgs(spec('status'), ['--replay='])).message).toBe('--replay: the value is empty');
  });

  it('an option that declares what empty means takes it', () => {
    expect(parseArgs(spec('explain'), ['--visible-devices', '']).options.visibleDevices).toBe('');
    expect(parseArgs(spec('record'), ['--note', '', '--out', 'r.ndjson']).options.note).toBe('');
  });

  it('an empty positional argument is refused, naming its place', () => {
    expect(refusal(() => parseArgs(spec('explain'), ['a.log', ''])).message).toBe('argument 2 is empty');
  });
});

describe('the command after --', () => {
  it('none, or an empty program name, is a usage error with an example', () => {
    expect(refusal(() => childCommand([], 'run', 'gpumem run -- python train.py')).hint).toBe('put it after --, e.g. gpumem run -- python train.py');
    const e = refusal(() => childCommand(['', 'x'], 'run', 'gpumem run -- python train.py'));
    expect(e.code).toBe('USAGE');
    expect(e.message).toBe('the command after -- starts with an empty program name ("")');
    expect(childCommand(['python', ''], 'run', 'x')).toEqual(['python', '']);
  });
});
