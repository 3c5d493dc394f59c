/**
 * Python traceback frames: `File "path", line N, in name`. The user's frame is the last one that is not
 * inside torch, site-/dist-packages or the standard library: the line of their code that asked for memory.
 */
import type { OomFrame } from './types.js';

const FRAME = /File "([^"]{1,1000})", line (\d{1,9}), in ([^\s]{1,200})/;
const LIBRARY = /(?:site-packages|dist-packages|[\\/]lib[\\/]python\d[\d.]*[\\/]|[\\/]torch[\\/]|^<frozen |^<string>|[\\/]importlib[\\/])/;

/** Reads a frame from one normalized line, or null. */
export function parseFrame(line: string): OomFrame | null {
  const m = FRAME.exec(line);
  if (!m) return null;
  return { file: m[1] as string, line: Number(m[2]), function: (m[3] as string).replace(/,$/, '') };
}

/** True when the frame belongs to the user's code rather than a library or the interpreter. */
export function isUserFrame(frame: OomFrame): boolean {
  return !LIBRARY.test(frame.file);
}
