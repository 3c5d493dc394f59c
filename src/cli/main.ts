/**
 * One gpumem invocation: parse, dispatch, print errors, return the exit status. It never exits the process
 * itself (bin.ts sets the status), so tests run it in-process with captured streams.
 */
import { readFileSync } from 'node:fs';
import { GpumemError, isGpumemError } from '../core/errors.js';
import { printable } from '../core/text.js';
import { parseArgs } from './args.js';
import { HANDLERS } from './commands/index.js';
import type { CommandContext, Output } from './context.js';
import { exitCodeForError, exitCodeForOutcome } from './exit-codes.js';
import { commandHelp, mainHelp } from './help.js';
import { aliasFlag, familiarWordError } from './familiar-words.js';
import { COMMANDS, findCommand } from './table.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The outside world of one invocation; each part defaults to this process's own. */
export interface MainContext {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function output(stream: MainContext['stdout']): Output {
  return {
    write: (text) => void stream.write(text),
    isTTY: Boolean(stream.isTTY),
    columns: stream.columns && stream.columns > 0 ? stream.columns : 100,
    stream,
  };
}

/** Runs one gpumem invocation and returns its exit status. */
export async function main(argv: readonly string[], context: Partial<MainContext> = {}): Promise<number> {
  const stdout = output(context.stdout ?? process.stdout);
  const stderr = output(context.stderr ?? process.stderr);
  const env = context.env ?? process.env;
  try {
    const first = argv[0];
    if (first === '--version' || first === '-V') {
      stdout.write(`${version()}\n`);
      return 0;
    }
    if (first === '--help' || first === '-h' || first === 'help') {
      const asked = first === 'help' && argv[1] !== 'help' ? argv[1] : undefined;
      const target = asked === undefined ? undefined : findCommand(asked);
      if (asked !== undefined && !target) {
        const familiar = familiarWordError(printable(asked));
        if (familiar) throw familiar;
        throw new GpumemError('UNKNOWN_COMMAND', `help: unknown command "${printable(asked)}"`, { hint: 'run gpumem --help for the list of commands' });
      }
      stdout.write(target ? commandHelp(target, stdout.columns) : mainHelp(version()));
      return 0;
    }
    // `gpumem --info` is how gpu_memory_manager.py users ask for status: the flag form of an alias.
    const flagAlias = first === undefined ? null : aliasFlag(first, (word) => COMMANDS.some((c) => c.aliases?.includes(word)));
    const explicit = flagAlias !== null || (first !== undefined && !first.startsWith('-'));
    const name = flagAlias ?? (explicit ? first! : 'doctor');
    // A verb of another tool (`clear`, `--suggest-batch-size`) is answered with the command that does its job.
    const familiar = first === undefined ? null : familiarWordError(printable(first));
    if (familiar) throw familiar;
    const spec = findCommand(name);
    const load = spec ? HANDLERS[spec.name] : undefined;
    if (!spec || !load) {
      throw new GpumemError('UNKNOWN_COMMAND', `unknown command "${printable(name)}"`, { hint: 'run gpumem --help for the list of commands' });
    }
    const args = parseArgs(spec, explicit ? argv.slice(1) : argv);
    if (args.options.help) {
      stdout.write(commandHelp(spec, stdout.columns));
      return 0;
    }
    const ctx: CommandContext = {
      args,
      stdout,
      stderr,
      stdin: context.stdin ?? process.stdin,
      env,
      color: stdout.isTTY && !env.NO_COLOR && !args.options.noColor,
      cwd: context.cwd ?? process.cwd(),
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
