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

/** Like historyFor, but a failure is a warning: supervising the job matters more than recording it. */
export function tryHistory(ctx: HistoryContext): Db | null {
  if (ctx.args.options.noHistory) return null;
  try {
    return historyFor(ctx);
  } catch (error) {
    ctx.stderr.write(`gpumem: warning: run history unavailable (${(error as Error).message}); continuing without it\n`);
    return null;
  }
}
