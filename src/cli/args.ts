/**
 * Parses argv against the options table. Accepts `--name value`, `--name=value`, `-x value`, `--no-flag`
 * for booleans, and `--` to end options (the rest is the child command for run/fit). Every rule of the
 * table (choices, integer, min/max, transform) is checked here, and defaults applied, so a handler gets
 * typed values it need not check again.
 */
import { GpumemError } from '../core/errors.js';
import { printable } from '../core/text.js';
import { parseByteSize } from '../core/units.js';
import type { CommandSpec, NumberRules, OptionSpec, ParsedArgs } from './spec.js';
import { GLOBAL_OPTIONS } from './table.js';

export { camel } from './spec.js';

type Raw = string | number | boolean | string[];

export function parseArgs<O = Record<string, unknown>>(spec: CommandSpec<O>, argv: readonly string[]): ParsedArgs<O> {
  const all = [...GLOBAL_OPTIONS, ...spec.options];
  const raw = new Map<OptionSpec, Raw>();
  const positionals: string[] = [];
  let rest: string[] = [];

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    if (token.startsWith('-') && token !== '-' && !/^-\d/.test(token)) {
      const eq = token.indexOf('=');
      const rawName = eq >= 0 ? token.slice(0, eq) : token;
      const inline = eq >= 0 ? token.slice(eq + 1) : undefined;
      const { option, negated } = lookup(all, rawName, spec);
      if (option.type === 'boolean') {
        if (inline !== undefined) throw usage(`${printable(rawName)} takes no value`, spec);
        raw.set(option, !negated);
        continue;
      }
      const value = inline ?? argv[++i];
      if (value === undefined) throw usage(`${printable(rawName)} needs a value (${option.value ?? 'VALUE'})`, spec);
      if (inline === undefined && 'path' in option && option.path && value.startsWith('-')) throw optionAsPath(rawName, value, spec);
      raw.set(option, readValue(option, value, raw.get(option)));
      continue;
    }
    if (token === '') throw usage(`argument ${positionals.length + 1} is empty`, spec, 'an unset shell variable or stray quotes give an empty argument');
    positionals.push(token);
  }
  if (rest.length > 0 && !spec.passthrough) {
    throw usage(`"${spec.name}" does not run a command; remove "-- ${printable(rest.join(' '))}"`, spec);
  }
  const options: Record<string, unknown> = {};
  for (const option of all) options[option.key] = finish(option, raw.get(option));
  return { command: spec.name, options: options as ParsedArgs<O>['options'], positionals, rest };
}

function lookup(all: readonly OptionSpec[], raw: string, spec: CommandSpec): { option: OptionSpec; negated: boolean } {
  const name = raw.startsWith('--') ? raw.slice(2) : raw.slice(1);
  const short = !raw.startsWith('--');
  const direct = all.find((o) => (short ? o.short === name : o.name === name));
  if (direct) return { option: direct, negated: false };
  if (!short && name.startsWith('no-')) {
    const positive = all.find((o) => o.name === name.slice(3) && o.type === 'boolean');
    if (positive) return { option: positive, negated: true };
  }
  const near = all.map((o) => `--${o.name}`).filter((n) => n.includes(name.slice(0, 3)));
  throw new GpumemError('UNKNOWN_OPTION', `unknown option ${printable(raw)} for "gpumem ${spec.name}"`, {
    hint: near.length > 0 ? `did you mean ${near.slice(0, 3).join(', ')}? see gpumem ${spec.name} --help` : `see gpumem ${spec.name} --help`,
  });
}

/** One occurrence of an option with a value; a list adds to what earlier occurrences gave. */
function readValue(option: OptionSpec, value: string, previous: Raw | undefined): Raw {
  const flag = `--${option.name}`;
  switch (option.type) {
    case 'number': {
      const n = readDecimal(option, flag, value);
      checkNumber(option, flag, value, n);
      return n;
    }
    case 'bytes':
      return parseByteSize(value, flag);
    case 'list': {
      const items = 'wholeValues' in option && option.wholeValues ? [value] : value.split(',').map((s) => s.trim()).filter((s) => s !== '');
      return [...(Array.isArray(previous) ? previous : []), ...items];
    }
    default:
      if ('choices' in option && option.choices && !option.choices.includes(value)) {
        throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${printable(value)}" is not one of ${option.choices.join(', ')}`, { hint: `use ${flag} ${option.choices[0]}` });
      }
      // An empty file name or setting is a quoting slip (`--replay "$UNSET"`), never what was meant.
      if (value === '' && !('allowEmpty' in option && option.allowEmpty)) {
        throw new GpumemError('BAD_OPTION_VALUE', `${flag}: the value is empty`, {
          hint: `give ${flag} ${option.value ?? 'VALUE'}; an unset shell variable or stray quotes give an empty value`,
        });
      }
      return value;
  }
}

/**
 * Only plain decimal numbers ("64", "-1.5", "1e3"): Number() would also take "0x40", "0b101", "0o17",
 * "Infinity" and surrounding spaces, and a value written that way is more likely a slip than a wish.
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function readDecimal(option: NumberRules & { default?: number }, flag: string, value: string): number {
  const n = Number(value);
  if (DECIMAL.test(value) && Number.isFinite(n)) return n;
  const based = /^[+-]?0[xob]/i.test(value.trim()) && Number.isFinite(n);
  throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${printable(value)}" is not ${based ? 'a decimal number' : 'a number'}`, {
    hint: based ? `write it in decimal: ${flag} ${n}` : `give ${flag} a number, e.g. ${flag} ${exampleFor(option)}`,
  });
}

/** A value the option accepts, for hints: its default, else a bound it includes, else a point inside. */
function exampleFor(option: NumberRules & { default?: number }): number {
  const { min, max } = option;
  if (option.default !== undefined) return option.default;
  if (min !== undefined && !option.minExclusive) return min;
  if (max !== undefined && !option.maxExclusive && min === undefined) return max;
  if (min !== undefined && max !== undefined) return option.integer ? Math.ceil((min + max) / 2) : (min + max) / 2;
  if (min !== undefined) return option.integer ? Math.floor(min) + 1 : min + 1;
  return 1;
}

/** The handler's value: booleans are false when absent, defaults apply, transforms run once at the end. */
function finish(option: OptionSpec, value: Raw | undefined): unknown {
  const flag = `--${option.name}`;
  if (option.type === 'boolean') return value ?? false;
  const given = value ?? ('default' in option ? option.default : undefined);
  if (given === undefined) return undefined;
  if ('transform' in option && option.transform) return (option.transform as (v: unknown, f: string) => unknown)(given, flag);
  if (option.type === 'bytes' && typeof given === 'string') return parseByteSize(given, flag);
  return given;
}

/**
 * The range of a number option in words, for help and errors: "whole number ≥ 1", "0 < F ≤ 1". Empty when
 * the option has no rules.
 */
export function describeRange(option: NumberRules & { value?: string }): string {
  const v = option.value ?? 'N';
  const lo = option.min === undefined ? '' : `${option.min} ${option.minExclusive ? '<' : '≤'} `;
  const hi = option.max === undefined ? '' : ` ${option.maxExclusive ? '<' : '≤'} ${option.max}`;
  // One bound reads best with the name first ("N ≥ 1"), two as an interval ("0 < F ≤ 1").
  const range = lo !== '' && hi === '' ? `${v} ${option.minExclusive ? '>' : '≥'} ${option.min}` : lo === '' && hi === '' ? '' : `${lo}${v}${hi}`;
  return [option.integer ? 'whole number' : '', range].filter((s) => s !== '').join(', ');
}

function checkNumber(option: NumberRules & { default?: number }, flag: string, text: string, n: number): void {
  const { min, max } = option;
  const low = min !== undefined && (option.minExclusive ? n <= min : n < min);
  const high = max !== undefined && (option.maxExclusive ? n >= max : n > max);
  const example = exampleFor(option);
  if (option.integer) {
    if (Number.isInteger(n) && !Number.isSafeInteger(n)) {
      throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${printable(text)}" is too large (whole numbers go up to 2^53 − 1 = ${Number.MAX_SAFE_INTEGER})`, { hint: `e.g. ${flag} ${example}` });
    }
    if (!Number.isInteger(n) || low || high) {
      const bounds = max === undefined ? `of at least ${min ?? 0}` : min === undefined ? `of at most ${max}` : `between ${min} and ${max}`;
      throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${printable(text)}" must be a whole number ${bounds}`, { hint: `e.g. ${flag} ${example}` });
    }
    return;
  }
  if (low || high) {
    const both = min !== undefined && max !== undefined;
    const words = both && !option.minExclusive && !option.maxExclusive
      ? `between ${min} and ${max}`
      : both ? `in ${option.minExclusive ? '(' : '['}${min}, ${max}${option.maxExclusive ? ')' : ']'}` : min !== undefined ? `of at least ${min}` : `of at most ${max}`;
    throw new GpumemError('BAD_OPTION_VALUE', `${flag}: ${n} is not ${option.noun ?? 'a number'} ${words}`, { hint: `e.g. ${flag} ${example}` });
  }
}

/** A path option followed by what looks like an option or stdin's "-": taking it as the file name would swallow it. */
function optionAsPath(rawName: string, value: string, spec: CommandSpec): GpumemError {
  const shown = printable(value);
  return new GpumemError('USAGE', `${rawName} needs a file name, but the next argument "${shown}" looks like an option`, {
    hint: `put the file name right after ${rawName}; for a file whose name starts with "-", write ${rawName}=${shown} or ${rawName} ./${shown} (see gpumem ${spec.name} --help)`,
  });
}

/**
 * The child command after `--` of run, fit and estimate, checked before anything starts: none at all, or an
 * empty program name (`-- "$CMD"` with CMD unset), is a usage error whose hint shows where it goes.
 */
export function childCommand(rest: readonly string[], verb: string, example: string): string[] {
  if (rest.length === 0) throw new GpumemError('USAGE', `no command to ${verb}`, { hint: `put it after --, e.g. ${example}` });
  if (rest[0]?.trim() === '') {
    throw new GpumemError('USAGE', `the command after -- starts with an empty program name ("${printable(rest[0])}")`, {
      hint: `check the quoting or the variable that gave it, e.g. ${example}`,
    });
  }
  return [...rest];
}

function usage(message: string, spec: CommandSpec, why?: string): GpumemError {
  return new GpumemError('USAGE', message, { hint: `${why === undefined ? '' : `${why}; `}see gpumem ${spec.name} --help` });
}
