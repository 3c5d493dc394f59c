/**
 * The terminal's side of the live view: raw keyboard input, size and resize, and putting the terminal back
 * on every way out (q, Ctrl-C, SIGINT/SIGTERM/SIGHUP from outside, an uncaught error). Restoring is
 * synchronous and idempotent so the last handler to run cannot leave the terminal raw or on the
 * alternate screen.
 */
import type { ReadStream, WriteStream } from 'node:tty';
import { Screen } from './screen.js';

export interface Terminal {
  screen: Screen;
  columns(): number;
  rows(): number;
  /** Resolves when a signal asks to stop; `signal` says which. */
  stopped: Promise<NodeJS.Signals>;
  restore(): void;
}

/** Takes over the terminal; `onKey` gets each chunk of raw input, `onResize` each size change. */
export function takeTerminal(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, onKey: (key: string) => void, onResize: () => void): Terminal {
  const tty = output as WriteStream;
  const keys = input as ReadStream;
  const screen = new Screen({ write: (text: string) => tty.write(text) });
  let resolveStop: (signal: NodeJS.Signals) => void = () => {};
  const stopped = new Promise<NodeJS.Signals>((resolve) => (resolveStop = resolve));
  const onSignal = (signal: NodeJS.Signals): void => resolveStop(signal);
  const onData = (chunk: Buffer | string): void => {
    try {
      onKey(chunk.toString());
    } catch (error) {
      // Give the terminal back first, so the error is printed on the normal screen, not lost with the alternate one.
      restore();
      throw error;
    }
  };
  let restored = false;
  const restore = (): void => {
    if (restored) return;
    restored = true;
    screen.restore();
    if (keys.isTTY) keys.setRawMode(false);
    keys.off('data', onData);
    keys.pause();
    tty.off('resize', onResize);
    for (const s of SIGNALS) process.off(s, onSignal);
    process.off('exit', restore);
  };
  const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of SIGNALS) process.on(s, onSignal);
  // The last resort: whatever ends the process, the terminal is given back first.
  process.on('exit', restore);
  if (keys.isTTY) keys.setRawMode(true);
  keys.setEncoding?.('utf8');
  keys.on('data', onData);
  keys.resume();
  tty.on('resize', onResize);
  screen.enter();
  return {
    screen,
    columns: () => tty.columns || 80,
    rows: () => tty.rows || 24,
    stopped,
    restore,
  };
}
