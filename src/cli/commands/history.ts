/** Opening the run history for a command: --db or the XDG default; a broken history never stops a run. */
import { defaultDbPath, openHistory, type Db } from '../../store/index.js';
import type { CommandContext } from '../context.js';

/** Opens the history named by --db (else the default path). */
export function historyFor(ctx: CommandContext): Db {
  const path = typeof ctx.args.options.db === 'string' ? ctx.args.options.db : defaultDbPath(ctx.env);
  return openHistory(path);
}

/** Like historyFor, but a failure is a warning: supervising the job matters more than recording it. */
export function tryHistory(ctx: CommandContext): Db | null {
  if (ctx.args.options.noHistory) return null;
  try {
    return historyFor(ctx);
  } catch (error) {
    ctx.stderr.write(`gpumem: warning: run history unavailable (${(error as Error).message}); continuing without it\n`);
    return null;
  }
}
