/**
 * Allocation sites: which line of the user's code a block or trace entry belongs to. PyTorch records stacks
 * innermost first, mixing torch internals and (with stacks="all") C++ frames; the site is the innermost
 * frame that is neither, i.e. the last frame outside torch on the way out of the allocator.
 */
import { isDict, type PickleDict } from './unpickle-types.js';

/** Marker site for memory whose stack was not recorded (allocated before recording began, or no context). */
export const NO_STACK = '(no stack recorded)';
/** Marker site for stacks that are entirely torch or C++ frames. */
export const NO_USER_FRAME = '(inside torch, no user frame)';

const CPP_PREFIXES = ['PyEval_', 'unwind::', 'torch::', 'c10::', 'at::', '_PyEval', 'PyObject_'];

/** True for a frame of torch itself or a native (C/C++) frame, which never names the user's code. */
export function isTorchOrNative(filename: string, name: string): boolean {
  if (filename === '??' || filename === '' || filename.endsWith('.so') || filename.endsWith('.cpp') || filename.endsWith('.h')) return true;
  if (/[\\/]torch[\\/]/.test(filename) || filename.startsWith('torch/')) return true;
  return CPP_PREFIXES.some((p) => name.startsWith(p));
}

/**
 * The line number of a frame dict as a number: ints as they are, wide ints and numeric strings converted,
 * a missing line 0, anything else (a container in a crafted file) NaN, never a conversion that could throw.
 */
export function lineOf(frame: PickleDict): number {
  const line = frame.line;
  if (typeof line === 'number') return line;
  if (line === undefined || line === null) return 0;
  return typeof line === 'object' ? NaN : Number(line);
}

/** "file:line (name)" for a raw frame, or null when the element is not a frame dict. */
export function frameText(frame: unknown): string | null {
  if (!isDict(frame) || typeof frame.filename !== 'string') return null;
  const line = lineOf(frame);
  const name = typeof frame.name === 'string' ? frame.name : '?';
  return `${frame.filename}:${line} (${name})`;
}

/** The allocation site of a raw frame list (see the module comment); never throws on odd elements. */
export function siteOf(frames: readonly unknown[]): string {
  if (frames.length === 0) return NO_STACK;
  for (const f of frames) {
    if (!isDict(f) || typeof f.filename !== 'string') continue;
    if (!isTorchOrNative(f.filename, typeof f.name === 'string' ? f.name : '')) return frameText(f) as string;
  }
  return NO_USER_FRAME;
}
