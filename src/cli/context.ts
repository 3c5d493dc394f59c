/** What a command handler gets: its parsed arguments and the outside world, passed in so tests can swap it. */
import type { ParsedArgs } from './spec.js';
import type { Outcome } from './exit-codes.js';

export interface Output {
  write(text: string): void;
  /** True when this stream is a terminal (colour and width apply). */
  isTTY: boolean;
  /** Terminal width in columns; 100 when unknown. */
  columns: number;
}

export interface CommandContext {
  args: ParsedArgs;
  stdout: Output;
  stderr: Output;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Colour allowed: stdout is a TTY, NO_COLOR unset, --no-color not given. */
  color: boolean;
  cwd: string;
}

export type CommandHandler = (ctx: CommandContext) => Promise<Outcome>;
