/** `gpumem kill`: end stale GPU processes safely (docs/kill.md). */
import { createInterface } from 'node:readline';
import { GpumemError, formatBytes, formatDuration } from '../../core/index.js';
import { openSourceFromContext } from '../open-source.js';
import { executeKill, gpuProofReason, isEmptyCriteria, parseDurationMs, protectedPids, selectTargets, type KillCriteria, type KillRow } from '../../supervise/index.js';
import type { CommandContext, CommandHandler } from '../context.js';
import type { KillOptions } from '../options/gpus.js';
import { painter, table, trimTo } from '../render/style.js';

export const KILL_SCHEMA_VERSION = 1;

function criteria(ctx: CommandContext<KillOptions>): KillCriteria {
  const o = ctx.args.options;
  const pids = ctx.args.positionals.map((p) => {
    if (!/^\d+$/.test(p)) throw new GpumemError('USAGE', `"${p}" is not a pid`, { hint: 'give process ids as numbers, or use filters such as --gpu 0 --orphans' });
    return Number(p);
  });
  return {
    pids, gpus: o.gpu ?? [], orphans: o.orphans, zombieHolders: o.zombieHolders, user: o.user ?? null, idle: o.idle,
    olderThanMs: o.olderThan !== undefined ? parseDurationMs(o.olderThan, '--older-than') : null,
  };
}

function renderRows(rows: readonly KillRow[], color: boolean, width: number): string {
  const paint = painter(color);
  const body = rows.map((r) => [
    String(r.pid), r.gpuIndex === null ? '-' : String(r.gpuIndex), formatBytes(r.usedBytes), r.user ?? '?', formatDuration(r.ageMs),
    r.action === 'end' ? paint('yellow', 'END') : paint('gray', 'SKIP'), r.action === 'end' ? '' : r.reason, r.cmdline,
  ]);
  const lines = table([['PID', 'GPU', 'MEMORY', 'USER', 'AGE', 'ACTION', 'WHY NOT', 'COMMAND'], ...body], ['right', 'right', 'right']);
  return `${lines.map((l) => (color ? l : trimTo(l, Math.max(width, 60)))).join('\n')}\n`;
}

async function confirm(ctx: CommandContext, count: number): Promise<boolean> {
  const rl = createInterface({ input: ctx.stdin, terminal: false });
  ctx.stdout.write(`end ${count} process${count === 1 ? '' : 'es'} (SIGTERM, then SIGKILL)? [y/N] `);
  const answer = await new Promise<string>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(''));
  });
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

export const run: CommandHandler<KillOptions> = async (ctx) => {
  const o = ctx.args.options;
  const c = criteria(ctx);
  const graceMs = o.graceMs;
  if (isEmptyCriteria(c)) {
    throw new GpumemError('USAGE', 'gpumem kill needs pids or a filter', { hint: 'e.g. gpumem kill --gpu 0 --orphans --dry-run; see gpumem kill --help' });
  }
  const source = await openSourceFromContext(ctx);
  try {
    if (o.replay !== undefined && !o.dryRun) {
      throw new GpumemError('USAGE', 'a recording cannot be acted on', { hint: 'add --dry-run to see what would be selected' });
    }
    const sample = await source.readSample();
    // Testing knob (docs/kill.md): lets end-to-end tests stand in for /dev/nvidia* with temp files.
    const killOptions = { devicePrefix: ctx.env.GPUMEM_DEVICE_PREFIX || undefined };
    const rows = selectTargets(sample, c, {
      uid: process.getuid?.() ?? -1, protectedPids: protectedPids(process.pid), allUsers: o.allUsers, nowMs: Date.now(),
      gpuProof: (pid) => gpuProofReason(pid, killOptions),
    });
    const toEnd = new Set(rows.filter((r) => r.action === 'end').map((r) => r.pid));
    if (!o.json) ctx.stdout.write(rows.length === 0 ? 'no GPU process matches\n' : renderRows(rows, ctx.color, ctx.stdout.columns));
    if (o.dryRun || toEnd.size === 0) {
      if (o.json) ctx.stdout.write(`${JSON.stringify({ schemaVersion: KILL_SCHEMA_VERSION, dryRun: Boolean(o.dryRun), rows, outcomes: [] }, null, 2)}\n`);
      else if (o.dryRun) ctx.stdout.write('dry run: nothing was signalled\n');
      return { kind: 'ok' };
    }
    if (!o.yes) {
      if (!ctx.stdout.isTTY || !(ctx.stdin as NodeJS.ReadStream).isTTY) {
        throw new GpumemError('USAGE', 'not asking for confirmation: input is not a terminal', { hint: 'add --yes to act, or --dry-run to only show' });
      }
      if (!(await confirm(ctx, toEnd.size))) {
        ctx.stdout.write('nothing done\n');
        return { kind: 'ok' };
      }
    }
    const outcomes = await executeKill(rows, source, graceMs, killOptions);
    if (o.json) ctx.stdout.write(`${JSON.stringify({ schemaVersion: KILL_SCHEMA_VERSION, dryRun: false, rows, outcomes }, null, 2)}\n`);
    else for (const out of outcomes) ctx.stdout.write(`pid ${out.pid}: ${out.outcome} — ${out.detail}\n`);
    const bad = outcomes.some((x) => x.outcome === 'failed' || (x.outcome === 'skipped' && toEnd.has(x.pid)));
    return { kind: bad ? 'failure' : 'ok' };
  } finally {
    source.close();
  }
};
