/**
 * The options table: every command and option gpumem accepts, declared once in cli/options/ against each
 * command's typed options interface (how to add one: cli/spec.ts). Parsing (cli/args.ts), `--help`
 * (cli/help.ts) and docs/cli.md (scripts/gen-docs.ts) are all generated from it.
 */
import { optionList, type CommandSpec, type GlobalOptions, type OptionSpec } from './spec.js';
import { ESTIMATE } from './options/estimate.js';
import { EXPLAIN, PYTHON_PATH, SNAPSHOT } from './options/files.js';
import { DIAGNOSE, DOCTOR, KILL, RECORD, STATUS, WATCH } from './options/gpus.js';
import { GLOBAL_TABLE } from './options/shared.js';
import { SERVE } from './options/serve.js';
import { FIT, PIPELINE, RUN, RUNS } from './options/supervise.js';

/** Accepted by every command. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = optionList<GlobalOptions>(GLOBAL_TABLE);

/** Every command, in the order of `gpumem --help`. */
export const COMMANDS: readonly CommandSpec[] = [DOCTOR, DIAGNOSE, STATUS, WATCH, RECORD, RUN, PIPELINE, KILL, RUNS, SERVE, EXPLAIN, SNAPSHOT, ESTIMATE, PYTHON_PATH, FIT];

/** Looks a command up by name or alias (`info` is `status`). */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name) ?? COMMANDS.find((c) => c.aliases?.includes(name));
}
