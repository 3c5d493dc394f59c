/** Types of the options table (cli/table.ts): one declaration feeds parsing, --help and docs/cli.md. */

export type OptionType = 'boolean' | 'string' | 'number' | 'bytes' | 'list' | 'repeat';

export interface OptionSpec {
  /** Long name without dashes, kebab-case: "retry-oom". */
  name: string;
  /** One-letter alias without the dash. */
  short?: string;
  type: OptionType;
  /** Placeholder for the value in help: "FILE", "N", "BYTES". */
  value?: string;
  description: string;
  default?: string | number | boolean;
  /** Allowed values for a string option. */
  choices?: readonly string[];
  /** A 'list' option may be given several times and/or comma-separated; a 'repeat' option several times, each value kept whole. */
}

export interface ArgSpec {
  name: string;
  description: string;
  required?: boolean;
  variadic?: boolean;
}

export interface CommandSpec {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Usage line after "gpumem ". */
  usage: string;
  /** A paragraph for `gpumem CMD --help` and the docs. */
  description?: string;
  args?: readonly ArgSpec[];
  options: readonly OptionSpec[];
  /** True when the command takes a child command after `--`. */
  passthrough?: boolean;
  examples?: readonly string[];
  /** Exit statuses this command uses beyond the common ones, for help and docs. */
  exits?: readonly string[];
}

export type OptionValue = string | number | boolean | string[] | undefined;

export interface ParsedArgs {
  command: string;
  options: Record<string, OptionValue>;
  positionals: string[];
  /** Everything after `--` (the child command for run/fit). */
  rest: string[];
}
