/**
 * A minimal /proc reader for supervision: one pass over /proc gives every pid's parent, process group,
 * state and start ticks. The supervisor needs exactly these four facts ten times a second, so it reads
 * /proc/PID/stat only (one small read per process) instead of the full host facts.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcEntry {
  pid: number;
  ppid: number;
  /** Process group id (stat field 5). */
  pgid: number;
  /** Single-letter state (stat field 3): R, S, D, Z, T… */
  state: string;
  /** Start time in clock ticks since boot (stat field 22): with the pid it names one process for ever. */
  startTicks: number;
  /** The command name from stat field 2 (kernel-truncated to 15 characters). */
  comm: string;
}

/**
 * Parses the text of /proc/PID/stat. The command name sits in parentheses and may itself contain spaces
 * and parentheses, so fields are counted from the last ")". Returns null for text that is not a stat line.
 */
export function parseStatLine(pid: number, text: string): ProcEntry | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const fields = text.slice(close + 2).trim().split(' ');
  // fields[0] is stat field 3 (state); field n is fields[n - 3].
  const state = fields[0];
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const startTicks = Number(fields[19]);
  if (!state || !Number.isInteger(ppid) || !Number.isInteger(pgid) || !Number.isFinite(startTicks)) return null;
  return { pid, ppid, pgid, state, startTicks, comm: text.slice(open + 1, close) };
}

/** Reads one process's stat entry; null when the pid does not exist (or vanished while we read). */
export function readProcEntry(pid: number, procRoot = '/proc'): ProcEntry | null {
  try {
    return parseStatLine(pid, readFileSync(`${procRoot}/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Reads every process visible in our PID namespace. Processes that exit mid-scan are skipped. */
export function readProcTable(procRoot = '/proc'): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  let names: string[];
  try {
    names = readdirSync(procRoot);
  } catch {
    return table;
  }
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    const entry = readProcEntry(pid, procRoot);
    if (entry) table.set(pid, entry);
  }
  return table;
}

/** Reads /proc/PID/cmdline as argv; null when unreadable. */
export function readCmdline(pid: number, procRoot = '/proc'): string[] | null {
  try {
    const raw = readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8');
    return raw.split('\0').filter((s) => s !== '');
  } catch {
    return null;
  }
}

/**
 * True when /proc/PID/environ holds exactly `entry` ("NAME=value"); null when it cannot be read (another
 * user's process, or gone). The file is the environment the process was started with.
 */
export function environHas(pid: number, entry: string, procRoot = '/proc'): boolean | null {
  const raw = readEnviron(pid, procRoot);
  return raw === null ? null : raw.split('\0').includes(entry);
}

/** The value of `name` in /proc/PID/environ: undefined when absent, null when the file cannot be read. */
export function readEnvironVar(pid: number, name: string, procRoot = '/proc'): string | null | undefined {
  const raw = readEnviron(pid, procRoot);
  if (raw === null) return null;
  const prefix = `${name}=`;
  return raw.split('\0').find((e) => e.startsWith(prefix))?.slice(prefix.length);
}

function readEnviron(pid: number, procRoot: string): string | null {
  try {
    return readFileSync(`${procRoot}/${pid}/environ`, 'utf8');
  } catch {
    return null;
  }
}
