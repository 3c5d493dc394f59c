/** Opening the run history for a command: --db or the XDG default; a broken history never stops a run. */
import { existsSync } from 'node:fs';
import { defaultDbPath, openHistory, type Db } from '../../store/index.js';
import type { CommandContext } from '../context.js';
import type { HistoryOptions } from '../options/shared.js';

type HistoryContext = CommandContext<HistoryOptions & { noHistory?: boolean }>;

const pathFor = (ctx: HistoryContext): string => ctx.args.options.db ?? defaultDbPath(ctx.env);

/** Opens the history named by --db (else the default path), creating it when needed. */
export function historyFor(ctx: HistoryContext): Db {
  return openHistory(pathFor(ctx));
}

/**
 * Opens the history only when its file exists, for commands that just read it: a mistyped --db must not
 * leave new directories and an empty database behind. Null means nothing was ever recorded there.
 */
export function existingHistoryFor(ctx: HistoryContext): Db | null {
  const path = pathFor(ctx);
  return existsSync(path) ? openHistory(path) : null;
}

const warned = new WeakSet<CommandContext>();

/** One warning per command: a full disk would otherwise repeat the same line for every stage and write. */
function warnOnce(ctx: CommandContext, text: string): void {
  if (warned.has(ctx)) return;
  warned.add(ctx);
  ctx.stderr.write(`gpumem: warning: ${text}\n`);
}

/** Like historyFor, but a failure is a warning: supervising the job matters more than recording it. */
export function tryHistory(ctx: HistoryContext): Db | null {
  if (ctx.args.options.noHistory) return null;
  try {
    return historyFor(ctx);
  } catch (error) {
    warnOnce(ctx, `run history unavailable (${(error as Error).message}); continuing without it`);
    return null;
  }
}

/**
 * Runs one history write; a failure (disk full, read-only file, a locked or damaged database) becomes a
 * single warning and null, so the job still runs, its report is still printed and its exit status returned.
 */
export function historyWrite<T>(ctx: CommandContext, what: string, write: () => T): T | null {
  try {
    return write();
  } catch (error) {
    warnOnce(ctx, `the run history could not be written (${what}: ${(error as Error).message}); the report above is not stored`);
    return null;
  }
}

/** Closes the history; a failure to close (e.g. a checkpoint on a full disk) is a warning too. */
export function closeHistory(ctx: CommandContext, db: Db | null): void {
  if (db) historyWrite(ctx, 'closing', () => db.close());
}
