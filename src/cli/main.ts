/** The gpumem executable: parse, dispatch, print errors, exit. The only module that calls process.exit. */
import { readFileSync } from 'node:fs';
import { GpumemError, isGpumemError } from '../core/index.js';
import { parseArgs } from './args.js';
import { HANDLERS } from './commands/index.js';
import type { CommandContext, Output } from './context.js';
import { exitCodeForError, exitCodeForOutcome } from './exit-codes.js';
import { commandHelp, mainHelp } from './help.js';
import { findCommand } from './table.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

function output(stream: NodeJS.WriteStream): Output {
  return {
    write: (text) => void stream.write(text),
    isTTY: Boolean(stream.isTTY),
    columns: stream.columns && stream.columns > 0 ? stream.columns : 100,
  };
}

/** Runs one gpumem invocation and returns its exit status (exported for in-process tests). */
export async function main(argv: readonly string[]): Promise<number> {
  const stdout = output(process.stdout);
  const stderr = output(process.stderr);
  try {
    const first = argv[0];
    if (first === '--version' || first === '-V') {
      stdout.write(`${version()}\n`);
      return 0;
    }
    if (first === '--help' || first === '-h' || first === 'help') {
      const target = first === 'help' && argv[1] ? findCommand(argv[1]) : undefined;
      stdout.write(target ? commandHelp(target) : mainHelp(version()));
      return 0;
    }
    const explicit = first !== undefined && !first.startsWith('-');
    const name = explicit ? first : 'doctor';
    const spec = findCommand(name);
    const load = HANDLERS[name];
    if (!spec || !load) {
      throw new GpumemError('UNKNOWN_COMMAND', `unknown command "${name}"`, { hint: 'run gpumem --help for the list of commands' });
    }
    const args = parseArgs(spec, explicit ? argv.slice(1) : argv);
    if (args.options.help) {
      stdout.write(commandHelp(spec));
      return 0;
    }
    const ctx: CommandContext = {
      args,
      stdout,
      stderr,
      stdin: process.stdin,
      env: process.env,
      color: stdout.isTTY && !process.env.NO_COLOR && args.options.color !== false && !args.options.noColor,
      cwd: process.cwd(),
    };
    const { run } = await load();
    return exitCodeForOutcome(await run(ctx));
  } catch (error) {
    if (isGpumemError(error)) {
      stderr.write(`gpumem: error: ${error.message}\n`);
      if (error.hint) stderr.write(`hint: ${error.hint}\n`);
    } else {
      const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
      stderr.write(`gpumem: internal error (this is a bug in gpumem; please report it with the lines below)\n${stack}\n`);
    }
    return exitCodeForError(error);
  }
}
