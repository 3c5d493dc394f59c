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

const NATIVE_FILE = /(\.(so|cpp|cc|cxx|c|h|hpp|o|S)|\.so\.\d+)$/;

/** True for a frame of torch itself or a native (C/C++) frame, which never names the user's code. */
export function isTorchOrNative(filename: string, name: string): boolean {
  if (filename === '??' || filename === '' || NATIVE_FILE.test(filename) || name.includes('::')) return true;
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

/** A Python source frame (`.py`, or `<stdin>`-style pseudo files), as opposed to CPython's or torch's C++. */
const isPythonFile = (filename: string): boolean => filename.endsWith('.py') || filename.startsWith('<');
const BACKWARD_NODE = /torch::autograd::generated::(\w+Backward\d*)::/;

/**
 * The allocation site of a raw frame list (see the module comment); never throws on odd elements. With C++
 * frames recorded (stacks="all") the innermost Python frame of user code wins over CPython and libc frames;
 * a stack with no Python frame at all that runs an autograd node (the backward thread) is "backward of <node>".
 */
export function siteOf(frames: readonly unknown[]): string {
  if (frames.length === 0) return NO_STACK;
  let anyPython = false;
  let backwardNode: string | null = null;
  for (const f of frames) {
    if (!isDict(f) || typeof f.filename !== 'string') continue;
    if (isPythonFile(f.filename)) {
      anyPython = true;
      if (!isTorchOrNative(f.filename, typeof f.name === 'string' ? f.name : '')) return frameText(f) as string;
    } else if (backwardNode === null && typeof f.name === 'string') {
      backwardNode = BACKWARD_NODE.exec(f.name)?.[1] ?? null;
    }
  }
  if (!anyPython && backwardNode !== null) return `backward of ${backwardNode}`;
  for (const f of frames) {
    if (!isDict(f) || typeof f.filename !== 'string') continue;
    if (!isTorchOrNative(f.filename, typeof f.name === 'string' ? f.name : '')) return frameText(f) as string;
  }
  return NO_USER_FRAME;
}
