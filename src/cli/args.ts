/**
 * Parses argv against the options table. Accepts `--name value`, `--name=value`, `-x value`, `--no-flag`
 * for booleans, and `--` to end options (the rest is the child command for run/fit).
 */
import { GpumemError, parseByteSize } from '../core/index.js';
import type { CommandSpec, OptionSpec, OptionValue, ParsedArgs } from './spec.js';
import { GLOBAL_OPTIONS } from './table.js';

export function parseArgs(spec: CommandSpec, argv: readonly string[]): ParsedArgs {
  const all = [...GLOBAL_OPTIONS, ...spec.options];
  const options: Record<string, OptionValue> = {};
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
        if (inline !== undefined) throw usage(`${rawName} takes no value`, spec);
        options[camel(option.name)] = !negated;
        continue;
      }
      const value = inline ?? argv[++i];
      if (value === undefined) throw usage(`${rawName} needs a value (${option.value ?? 'VALUE'})`, spec);
      setValue(options, option, value);
      continue;
    }
    positionals.push(token);
  }
  if (rest.length > 0 && !spec.passthrough) {
    throw usage(`"${spec.name}" does not run a command; remove "-- ${rest.join(' ')}"`, spec);
  }
  for (const option of spec.options) {
    const key = camel(option.name);
    if (options[key] === undefined && option.default !== undefined) {
      options[key] = option.type === 'bytes' ? parseByteSize(String(option.default), `--${option.name}`) : option.default;
    }
  }
  return { command: spec.name, options, positionals, rest };
}

/** "retry-oom" → "retryOom": the key handlers read. */
export function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
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
  throw new GpumemError('UNKNOWN_OPTION', `unknown option ${raw} for "gpumem ${spec.name}"`, {
    hint: near.length > 0 ? `did you mean ${near.slice(0, 3).join(', ')}? see gpumem ${spec.name} --help` : `see gpumem ${spec.name} --help`,
  });
}

function setValue(options: Record<string, OptionValue>, option: OptionSpec, value: string): void {
  const key = camel(option.name);
  const flag = `--${option.name}`;
  switch (option.type) {
    case 'number': {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) {
        throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${value}" is not a number`, { hint: `give ${flag} a number, e.g. ${flag} 3` });
      }
      options[key] = n;
      return;
    }
    case 'bytes':
      options[key] = parseByteSize(value, flag);
      return;
    case 'list': {
      const prev = Array.isArray(options[key]) ? (options[key] as string[]) : [];
      options[key] = [...prev, ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')];
      return;
    }
    case 'repeat':
      options[key] = [...(Array.isArray(options[key]) ? (options[key] as string[]) : []), value];
      return;
    default:
      if (option.choices && !option.choices.includes(value)) {
        throw new GpumemError('BAD_OPTION_VALUE', `${flag}: "${value}" is not one of ${option.choices.join(', ')}`, {
          hint: `use ${flag} ${option.choices[0]}`,
        });
      }
      options[key] = value;
  }
}

function usage(message: string, spec: CommandSpec): GpumemError {
  return new GpumemError('USAGE', message, { hint: `see gpumem ${spec.name} --help` });
}
