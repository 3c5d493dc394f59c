/**
 * How many /proc files the host-fact enricher may hold open between samples. Node raises its soft limit on
 * open files to the hard limit at start-up, so this is usually far above any GPU's process count; where it is
 * low (a container's 1024), holding more than half of it would starve the rest of gpumem (sockets, the run
 * database, logs, the NVML library) and the commands it supervises' pipes.
 */
import { readFileSync } from 'node:fs';

/** Descriptors left to everything else, beyond the half of the limit the enricher never touches. */
const RESERVED = 64;

/** The soft limit most systems start processes with, assumed when /proc/self/limits cannot be read. */
const DEFAULT_SOFT_LIMIT = 1024;

/** The soft "Max open files" limit from the text of /proc/self/limits, or null when absent or unlimited. */
function softOpenFiles(limits: string): number | null {
  const match = /^Max open files\s+(\d+)\s/m.exec(limits);
  return match ? Number(match[1]) : null;
}

/**
 * Half the soft limit on open files less 64, never below 0: the most /proc/PID/stat and statm files the
 * enricher keeps open. `limits` is the text of /proc/self/limits (default: read now); when it cannot be read
 * or parsed, the common soft limit of 1024 is assumed (a budget of 448).
 */
export function heldFilesBudget(limits: string | null | undefined = readLimits()): number {
  const soft = (limits ? softOpenFiles(limits) : null) ?? DEFAULT_SOFT_LIMIT;
  return Math.max(0, Math.floor(soft / 2) - RESERVED);
}

function readLimits(): string | null {
  try {
    // Our own process: the limit that counts is this one's, whatever /proc tree the facts come from.
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return null;
  }
}
