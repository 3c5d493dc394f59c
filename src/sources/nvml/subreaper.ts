/**
 * prctl(PR_SET_CHILD_SUBREAPER) through koffi (the one folder allowed to call C). A supervisor that is a
 * subreaper inherits every orphan of its descendants instead of init: a grandchild that double-forks with
 * setsid to leave the process tree ends up as gpumem's child, where the tree scan still finds it.
 */
import { koffi } from './ffi.js';

const PR_SET_CHILD_SUBREAPER = 36;

let done: boolean | null = null;

/**
 * Marks this process as a child subreaper (Linux ≥ 3.4). Returns true when it is one; false when libc or
 * the call is unavailable (then only the environment marker finds escaped processes). Called once.
 */
export function becomeChildSubreaper(): boolean {
  if (done !== null) return done;
  try {
    const libc = koffi.load('libc.so.6');
    const prctl = libc.func('int prctl(int option, ...)') as (...args: unknown[]) => number;
    done = prctl(PR_SET_CHILD_SUBREAPER, 'unsigned long', 1, 'unsigned long', 0, 'unsigned long', 0, 'unsigned long', 0) === 0;
  } catch {
    done = false;
  }
  return done;
}
