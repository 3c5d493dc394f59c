/**
 * Types of the options table (cli/options/): one declaration feeds parsing, --help and docs/cli.md.
 *
 * How to declare a command's options:
 * 1. Write its options interface; the property is the camelCase of the long name (`--retry-oom` → `retryOom`)
 *    and its type is what the handler receives: `boolean` (a flag, false when absent), `number` (needs a
 *    `default`), `number | undefined`, `string`, a union of `choices`, `string[] | undefined` (a list), or
 *    anything a `transform` returns.
 * 2. Declare the table `{ retryOom: { type: 'number', integer: true, min: 0, max: 100, default: 0, … } }`
 *    with `satisfies OptionTable<YourOptions>`: an option missing from the table, or one whose `default`,
 *    `choices` or `transform` do not give the interface's type, fails to compile. Table order is help order.
 * 3. `defineCommand<YourOptions>({ name, …, options: table })`, add it to COMMANDS, and type the handler
 *    `CommandHandler<YourOptions>`: the parser has applied defaults and checked every rule, so the handler
 *    repeats neither. `npm run docs` regenerates docs/cli.md.
 *
 * Rules a number option may carry: `integer` (a whole number, never beyond 2^53 − 1), `min`/`max` (with
 * `minExclusive`/`maxExclusive` for open ends), and `noun` naming what it is in error messages
 * ("fraction", "percentage"). A time option always has a `max`, so no timer can overflow. A number is read
 * in decimal only ("0x40" is refused). A string option refuses an empty value unless it is `allowEmpty`.
 */

export type OptionType = 'boolean' | 'string' | 'number' | 'bytes' | 'list';

interface OptionBase {
  /** One-letter alias without the dash. */
  short?: string;
  /** Placeholder for the value in help: "FILE", "N", "BYTES". */
  value?: string;
  description: string;
}

export interface BooleanOption extends OptionBase {
  type: 'boolean';
}

export interface NumberRules {
  /** Only whole numbers (and only safe ones: at most 2^53 − 1 in size). */
  integer?: boolean;
  min?: number;
  max?: number;
  /** `min` itself is refused (0 < F). */
  minExclusive?: boolean;
  /** `max` itself is refused (PCT < 100). */
  maxExclusive?: boolean;
  /** What the number is, for error messages: "a fraction in (0, 1]". Default "a number". */
  noun?: string;
}

export interface NumberOption<D extends number | undefined = number | undefined> extends OptionBase, NumberRules {
  type: 'number';
  default?: D;
}

/** A size such as "256MiB" or "1.5GB", parsed to bytes; the default is written the same way. */
export interface BytesOption<D extends string | undefined = string | undefined> extends OptionBase {
  type: 'bytes';
  default?: D;
}

export interface StringOption<S extends string = string> extends OptionBase {
  type: 'string';
  /** Allowed values; the interface's type is then their union. */
  choices?: readonly S[];
  default?: S;
  /**
   * The value is a file path: a following argument that starts with "-" is refused rather than taken as the
   * path (`--html --json` would write a file named `--json`); `--html=-x` or `--html ./-x` name such a file.
   */
  path?: boolean;
  /**
   * The handler takes an empty value itself: it means something (an empty CUDA_VISIBLE_DEVICES), or the
   * handler refuses it with more to say (`--gpus ''` lists the GPUs present). Otherwise `--opt ''` is refused.
   */
  allowEmpty?: boolean;
}

/** Given several times and/or comma-separated; empty items are dropped. */
export interface ListOption extends OptionBase {
  type: 'list';
  /** Each occurrence is one item, commas included (values that contain commas themselves). */
  wholeValues?: boolean;
}

/** A string or list option whose text becomes another value; a thrown GpumemError is the usage error. */
export type TransformOption<T> =
  | (OptionBase & { type: 'string'; transform: (text: string, flag: string) => T; default?: string })
  | (OptionBase & { type: 'list'; transform: (items: string[], flag: string) => T });

type IsOptional<V> = undefined extends V ? true : false;

/** The declarations that produce a value of type V (see the top of this file). */
export type OptionFor<V> =
  | ([V] extends [boolean] ? BooleanOption : never)
  | ([V] extends [number] ? (NumberOption<number> & { default: number }) | (BytesOption<string> & { default: string }) : never)
  | ([V] extends [number | undefined] ? (IsOptional<V> extends true ? NumberOption<undefined> | BytesOption<undefined> : never) : never)
  | ([V] extends [string] ? (string extends V ? StringOption<string> & { default: string } : StringOption<V> & { choices: readonly V[]; default: V }) : never)
  | ([V] extends [string | undefined] ? (IsOptional<V> extends true ? StringOption<Exclude<V, undefined>> & { default?: undefined } : never) : never)
  | ([V] extends [string[] | undefined] ? (IsOptional<V> extends true ? ListOption : never) : never)
  | (IsOptional<V> extends true ? TransformOption<V> : TransformOption<V> & { default: string });

/** A command's options table, checked against its options interface O. */
export type OptionTable<O> = { [K in keyof O]-?: OptionFor<O[K]> };

/** One option as parsing, help and docs see it: a table entry with its long name. */
export type OptionSpec = (BooleanOption | NumberOption | BytesOption | StringOption | ListOption | TransformOption<unknown>) & {
  /** Long name without dashes, kebab-case: "retry-oom". */
  name: string;
  /** The key handlers read: "retryOom". */
  key: string;
};

export interface ArgSpec {
  name: string;
  description: string;
  required?: boolean;
  variadic?: boolean;
}

export interface CommandDef<O> {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Usage line after "gpumem ". */
  usage: string;
  /** A paragraph for `gpumem CMD --help` and the docs. */
  description?: string;
  args?: readonly ArgSpec[];
  options: OptionTable<O>;
  /** True when the command takes a child command after `--`. */
  passthrough?: boolean;
  examples?: readonly string[];
  /** Exit statuses this command uses beyond the common ones, for help and docs. */
  exits?: readonly string[];
  /**
   * Other names that run this command: the verbs of the scripts people come from (`info`, `monitor`), so
   * the word they already type works on the first try. Listed in help and docs.
   */
  aliases?: readonly string[];
}

export interface CommandSpec<O = Record<string, unknown>> extends Omit<CommandDef<O>, 'options'> {
  options: readonly OptionSpec[];
}

/** Accepted by every command (cli/options/shared.ts). */
export interface GlobalOptions {
  help: boolean;
  noColor: boolean;
}

export interface ParsedArgs<O = unknown> {
  command: string;
  /** Every option of the command, defaults applied and rules checked. */
  options: O & GlobalOptions;
  positionals: string[];
  /** Everything after `--` (the child command for run/fit). */
  rest: string[];
}

/** "retry-oom" → "retryOom": the key handlers read. */
export function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** "retryOom" → "retry-oom": the long name of a table key. */
export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Turns a table into the list that parsing, help and docs read (long names from the keys, table order). */
export function optionList<O>(table: OptionTable<O>): OptionSpec[] {
  return Object.entries(table).map(([key, spec]) => ({ ...(spec as object), key, name: kebab(key) }) as OptionSpec);
}

/** A command declared against its options interface O (see the top of this file). */
export function defineCommand<O>(def: CommandDef<O>): CommandSpec<O> {
  return { ...def, options: optionList(def.options) };
}
