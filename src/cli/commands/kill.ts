/** `gpumem kill`: end stale GPU processes safely (docs/kill.md). */
import { createInterface } from 'node:readline';
import { killDocument } from '../../core/documents/kill.js';
import { GpumemError } from '../../core/errors.js';
import { formatBytes, formatDuration } from '../../core/units.js';
import { printable } from '../../core/text.js';
import { openSourceFromContext } from '../open-source.js';
import { cpuActivity, executeKill, groupJobs, gpuProofReason, isEmptyCriteria, readJobs, unknownGpus, parseDurationMs, protectedPids, selectTargets, type KillCriteria, type KillJob, type KillRow } from '../../supervise/index.js';
import { testDevicePrefixProblem, userNameExists } from '../../sources/index.js';
import type { CommandContext, CommandHandler } from '../context.js';
import type { KillOptions } from '../options/gpus.js';
import { painter, table, tableFitted } from '../render/style.js';


/** PID_MAX_LIMIT of the Linux kernel (2^22): no pid is larger on any configuration. */
const MAX_PID = 4_194_304;

function criteria(ctx: CommandContext<KillOptions>): KillCriteria {
  const o = ctx.args.options;
  const pids = ctx.args.positionals.map((p) => {
    if (!/^\d+$/.test(p)) throw new GpumemError('USAGE', `"${printable(p)}" is not a pid`, { hint: 'give process ids as numbers, or use filters such as --gpu 0 --orphans' });
    const pid = Number(p);
    // Beyond Linux's largest pid_max a number is no pid, and past 2^53 it would be shown rounded.
    if (pid < 1 || pid > MAX_PID) throw new GpumemError('USAGE', `"${p}" is not a pid (pids run from 1 to ${MAX_PID})`, { hint: 'copy the pid from gpumem status' });
    return pid;
  });
  return {
    pids, gpus: o.gpu ?? [], orphans: o.orphans, zombieHolders: o.zombieHolders, user: o.user ?? null, idle: o.idle,
    olderThanMs: o.olderThan !== undefined ? parseDurationMs(o.olderThan, '--older-than') : null,
  };
}

function renderRows(rows: readonly KillRow[], color: boolean, width: number): string {
  const paint = painter(color);
  const body = rows.map((r) => [
    String(r.pid), r.gpuIndex === null ? '-' : String(r.gpuIndex), formatBytes(r.usedBytes), printable(r.user ?? '?'), formatDuration(r.ageMs),
    r.action === 'end' ? paint('yellow', 'END') : paint('gray', 'SKIP'), r.action === 'end' ? '' : printable(r.reason), printable(r.cmdline),
  ]);
  const laid = [['PID', 'GPU', 'MEMORY', 'USER', 'AGE', 'ACTION', 'WHY NOT', 'COMMAND'], ...body];
  // Off a terminal the command is cut in its middle, so what it runs (the script and its arguments) stays.
  const lines = color ? table(laid, ['right', 'right', 'right']) : tableFitted(laid, ['right', 'right', 'right'], Math.max(width, 60), 24);
  return `${lines.join('\n')}\n`;
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

/**
 * The testing knob GPUMEM_DEVICE_PREFIX (docs/kill.md): extra stand-in device files for end-to-end tests.
 * It is honoured only for a private folder of the caller, and said aloud either way, so it can never
 * silently weaken the device-node check.
 */
export function testDevicePrefix(ctx: CommandContext): string | undefined {
  const prefix = ctx.env.GPUMEM_DEVICE_PREFIX;
  if (!prefix) return undefined;
  const problem = testDevicePrefixProblem(prefix);
  if (problem) {
    ctx.stderr.write(`gpumem: warning: GPUMEM_DEVICE_PREFIX ignored (${printable(problem)}); only /dev/nvidia* counts as a GPU device\n`);
    return undefined;
  }
  ctx.stderr.write(`gpumem: note: testing knob GPUMEM_DEVICE_PREFIX: files ${printable(prefix)}N also count as GPU devices\n`);
  return prefix;
}

/**
 * How long a filtered selection watches CPU time before calling anything idle or orphaned: a job started with
 * nohup or setsid that still computes has parent 1 too, and a DataLoader worker shows 0 % SM while it works.
 */
const ACTIVITY_WINDOW_MS = 1000;

/**
 * CPU activity of every member of every job on the GPUs (workers included), read twice ACTIVITY_WINDOW_MS
 * apart; only filters need it: pids the user named are ended as named.
 */
async function jobActivity(c: KillCriteria, jobs: ReadonlyMap<number, KillJob>): Promise<((pid: number) => boolean) | undefined> {
  if (c.pids.length > 0) return undefined;
  const members = new Set<number>();
  for (const job of jobs.values()) for (const pid of job.members) members.add(pid);
  return cpuActivity(members, ACTIVITY_WINDOW_MS);
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
    const missing = unknownGpus(sample, c.gpus);
    if (missing.length > 0) {
      const have = sample.devices.map((d) => d.index).join(', ');
      throw new GpumemError('USAGE', `no GPU ${missing.map(printable).join(', ')} on this machine`, { hint: have ? `its GPUs are ${have} (gpumem status lists them)` : 'no GPU is visible (gpumem status)' });
    }
    if (c.user !== null && !sample.processes.some((p) => p.host?.user === c.user) && !userNameExists(c.user)) {
      throw new GpumemError('USAGE', `--user: no user "${printable(c.user)}" ${o.replay === undefined ? 'on this machine' : 'in the recording or on this machine'}`, {
        hint: 'check the name (getent passwd NAME); gpumem status shows the users of GPU processes',
      });
    }
    const killOptions = { devicePrefix: testDevicePrefix(ctx) };
    // A recording's pids are not this machine's processes: its jobs come from its rows alone, and nothing in
    // it can be watched, so no job in it is proven idle.
    const jobs = o.replay !== undefined ? groupJobs(sample, {}, new Map()) : readJobs(sample);
    const activeInWindow = o.replay !== undefined ? undefined : await jobActivity(c, jobs);
    const rows = selectTargets(sample, c, {
      activeInWindow, jobs,
      uid: process.getuid?.() ?? -1, protectedPids: protectedPids(process.pid), allUsers: o.allUsers, nowMs: Date.now(),
      gpuProof: (pid) => gpuProofReason(pid, killOptions),
    });
    const toEnd = new Set(rows.filter((r) => r.action === 'end').map((r) => r.pid));
    if (!o.json) ctx.stdout.write(rows.length === 0 ? 'no GPU process matches\n' : renderRows(rows, ctx.color, ctx.stdout.columns));
    if (o.dryRun || toEnd.size === 0) {
      if (o.json) ctx.stdout.write(`${JSON.stringify(killDocument(Boolean(o.dryRun), rows, []), null, 2)}\n`);
      else if (o.dryRun) ctx.stdout.write('dry run: nothing was signalled\n');
      if (o.dryRun || rows.length === 0) return { kind: 'ok' };
      // Every selected pid was refused: nothing the user asked for happened, so say why for each and fail.
      if (!o.json) for (const r of rows) ctx.stdout.write(`pid ${r.pid}: refused — ${printable(r.reason)}\n`);
      return { kind: 'failure' };
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
    if (o.json) ctx.stdout.write(`${JSON.stringify(killDocument(false, rows, outcomes), null, 2)}\n`);
    else for (const out of outcomes) ctx.stdout.write(`pid ${out.pid}: ${out.outcome} — ${printable(out.detail)}\n`);
    const bad = outcomes.some((x) => x.outcome === 'failed' || (x.outcome === 'skipped' && toEnd.has(x.pid)));
    return { kind: bad ? 'failure' : 'ok' };
  } finally {
    source.close();
  }
};
