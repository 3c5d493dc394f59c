/** What a command handler gets: its parsed arguments and the outside world, passed in so tests can swap it. */
import type { ParsedArgs } from './spec.js';
import type { Outcome } from './exit-codes.js';

export interface Output {
  write(text: string): void;
  /** True when this stream is a terminal (colour and width apply). */
  isTTY: boolean;
  /** Terminal width in columns; 100 when unknown. */
  columns: number;
  /** The byte stream behind `write`: where a supervised child's own output is piped, untouched. */
  stream: NodeJS.WritableStream;
}

export interface CommandContext<O = unknown> {
  args: ParsedArgs<O>;
  stdout: Output;
  stderr: Output;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Colour allowed: stdout is a TTY, NO_COLOR unset, --no-color not given. */
  color: boolean;
  cwd: string;
}

export type CommandHandler<O = unknown> = (ctx: CommandContext<O>) => Promise<Outcome>;
