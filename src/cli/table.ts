/**
 * The options table: every command and option gpumem accepts, declared once. Parsing (cli/args.ts),
 * `--help` (cli/help.ts) and docs/cli.md (scripts/gen-docs.ts) are all generated from it.
 */
import type { CommandSpec, OptionSpec } from './spec.js';

/** Accepted by every command. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'help', short: 'h', type: 'boolean', description: 'show help for the command and exit' },
  { name: 'no-color', type: 'boolean', description: 'plain output without colour (also when NO_COLOR is set or output is not a terminal)' },
];

/** Where GPU state comes from; shared by every command that reads the GPUs. */
export const SOURCE_OPTIONS: readonly OptionSpec[] = [
  { name: 'source', type: 'string', value: 'KIND', choices: ['auto', 'nvml', 'smi'], default: 'auto', description: 'read the GPUs through NVML, nvidia-smi, or NVML with nvidia-smi as fallback' },
  { name: 'replay', type: 'string', value: 'FILE', description: 'read GPU state from a recording made by `gpumem record` instead of the GPUs' },
  { name: 'nvml-lib', type: 'string', value: 'PATH', description: 'path of libnvidia-ml.so.1 to load (also GPUMEM_NVML_LIB)' },
];

const JSON_OPTION: OptionSpec = { name: 'json', type: 'boolean', description: 'print the result as JSON (documented, versioned schema)' };

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'doctor',
    summary: 'GPU status and findings in one screen (the default command)',
    usage: 'doctor [options]',
    options: [JSON_OPTION, ...SOURCE_OPTIONS],
  },
  {
    name: 'status',
    summary: 'GPUs and the processes using them',
    usage: 'status [options]',
    options: [JSON_OPTION, ...SOURCE_OPTIONS],
  },
];

/** Looks a command up by name. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
