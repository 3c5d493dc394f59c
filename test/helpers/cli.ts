/**
 * Running gpumem from a test. `gpumemInProcess` calls `main(argv, context)` against the source with
 * captured streams (fast, never a stale build); `gpumemBinary` spawns the built dist/cli/bin.js (the global
 * setup builds it) for the end-to-end tests that need a real process: signals, exit codes set by bin.ts,
 * pipes, a loaded driver library.
 */
import { spawnSync } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.js';

/** The built executable. */
export const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** What stdin reads (empty when not given). */
  input?: string | Buffer;
  /** Terminal width the streams report; unset = not a terminal. */
  columns?: number;
}

function capture(columns: number | undefined): { stream: Writable & { columns?: number; isTTY?: boolean }; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
      done();
    },
  }) as Writable & { columns?: number; isTTY?: boolean };
  if (columns !== undefined) stream.columns = columns;
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** One gpumem invocation in this process, its output captured. */
export async function gpumemInProcess(argv: readonly string[], options: CliOptions = {}): Promise<CliResult> {
  const out = capture(options.columns);
  const err = capture(options.columns);
  const code = await main(argv, {
    stdout: out.stream,
    stderr: err.stream,
    stdin: Readable.from(options.input === undefined ? [] : [Buffer.from(options.input)]),
    env: { ...process.env, ...options.env },
    cwd: options.cwd ?? process.cwd(),
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

/** One run of the built executable, waited for. */
export function gpumemBinary(argv: readonly string[], options: CliOptions & { timeoutMs?: number } = {}): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...argv], {
    encoding: 'utf8',
    env: { ...process.env, ...options.env },
    cwd: options.cwd,
    input: options.input,
    timeout: options.timeoutMs ?? 30_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
