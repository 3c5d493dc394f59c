/** `gpumem serve`: the page, JSON API and /metrics until Ctrl-C (docs/serve.md). */
import { GpumemError } from '../../core/errors.js';
import { printable } from '../../core/text.js';
import { LiveSampler } from '../../orchestrate/index.js';
import { createApp, isLoopbackAddress, listen, newToken, ServerState } from '../../server/index.js';
import { defaultDbPath } from '../../store/index.js';
import type { CommandHandler } from '../context.js';
import type { ServeOptions } from '../options/serve.js';
import { untilInterrupted } from '../interrupt.js';
import { openSource } from '../../sources/index.js';
import { sourceOptionsFromContext } from '../open-source.js';
import { serveFields } from '../nvml-fields.js';
import { painter } from '../render/style.js';
import { decideExposure, TOKEN_FORM } from './serve-exposure.js';

/**
 * A known GPU process's state, parent and CPU ticks are re-read from /proc this often, all in one round,
 * instead of every sample: nothing the page or /metrics shows depends on them, and the diagnosis that does
 * is redone every 15 s. Re-reading 512 processes every 2 s was most of an idle server's CPU. A process that
 * leaves the GPU is forgotten at once; ending one re-reads /proc itself.
 */
const RESTAT_EVERY_MS = 10_000;
/**
 * With no page open nothing shows them, so the round waits this long (three samples at the default idle
 * interval): 512 stat reads every idle sample were half of an idle server's CPU. A /metrics scrape or an API
 * diagnosis meanwhile reads a window (six idle samples, 50 s) that still holds two rounds, so "used no CPU"
 * stays measured there; a page opening brings the quick round back at its first sample.
 */
const IDLE_RESTAT_EVERY_MS = 30_000;

export const run: CommandHandler<ServeOptions> = async (ctx) => {
  const o = ctx.args.options;
  const { port } = o;
  const intervalMs = o.interval;
  const given = o.token ?? ctx.env.GPUMEM_SERVE_TOKEN;
  if (given !== undefined && !TOKEN_FORM.test(given)) {
    throw new GpumemError('BAD_OPTION_VALUE', '--token: needs 16 to 256 characters of A–Z, a–z, 0–9, ._~+/=-', { hint: 'or leave it out for a random one' });
  }
  const exposure = await decideExposure(o, ctx.env);
  const { host } = exposure;
  const token = o.readonly || !exposure.actionsAllowed ? null : (given ?? newToken());
  if (o.token !== undefined) {
    // Any local user can read another process's arguments (ps, /proc/PID/cmdline); the environment is private.
    ctx.stderr.write('gpumem serve: warning: --token is visible to every user of this machine in the process list (/proc/PID/cmdline); set GPUMEM_SERVE_TOKEN instead\n');
  }

  const procRoot = o.procRoot === undefined ? {} : { procRoot: o.procRoot };
  // Per-process SM % is drawn only by an open page: every GPU's then, none otherwise (see serveFields).
  let pageOpen = (): boolean => false;
  const source = await openSource({ ...sourceOptionsFromContext(ctx, serveFields(() => pageOpen())), proc: { restatEveryMs: () => (pageOpen() ? RESTAT_EVERY_MS : IDLE_RESTAT_EVERY_MS), ...procRoot } });
  const sampler = new LiveSampler(source, {
    intervalMs,
    // Full samples only for the diagnosis window; the charts keep compact points (ServerState).
    capacity: 8,
    onError: (error) => ctx.stderr.write(`gpumem serve: warning: sampling failed: ${(error as Error).message ?? String(error)}\n`),
  });
  const state = new ServerState({ sampler, env: ctx.env, dbPath: o.db ?? defaultDbPath(ctx.env), proc: procRoot });
  const app = createApp({
    state, bindAddress: host, token, readToken: exposure.readToken,
    metrics: { hostLabel: o.hostLabel, maxProcesses: o.metricsMaxProcesses },
    kill: { graceMs: 5000, killOptions: { devicePrefix: ctx.env.GPUMEM_DEVICE_PREFIX || undefined } },
    // Energy is read when Prometheus asks for it (3.84 ms of driver CPU per GPU on an H100), not every sample.
    ...(source.readTotalEnergyMj ? { energyAtScrape: source.readTotalEnergyMj.bind(source) } : {}),
    // A recording plays one sample per read: slowing it while no page is open would slow the replay itself.
    pace: { intervalMs, idleIntervalMs: source.kind === 'replay' ? intervalMs : Math.max(intervalMs, o.idleInterval) },
    onError: (error) => ctx.stderr.write(`gpumem serve: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`),
    onWarning: (line) => ctx.stderr.write(`gpumem serve: warning: ${printable(line)}\n`),
  });
  pageOpen = () => app.events.size > 0;
  try {
    await sampler.start();
    let bound: Awaited<ReturnType<typeof listen>>;
    try {
      bound = await listen(app, host, port, exposure.tls ?? undefined);
    } catch (error) {
      throw new GpumemError('BAD_OPTION_VALUE', `cannot listen on ${host}:${port}: ${(error as Error).message}`, {
        hint: 'choose another --port (0 picks a free one) or --host', cause: error,
      });
    }
    const paint = painter(ctx.color);
    const shown = host.includes(':') ? `[${host}]` : host;
    const base = `${exposure.tls ? 'https' : 'http'}://${shown}:${bound.port}/`;
    ctx.stdout.write(`gpumem serve: ${base}  (metrics ${base}metrics, API ${base}api/v1/)\n`);
    if (token !== null) ctx.stdout.write(`actions token: ${token}  (page with actions: ${base}#token=${token})\n`);
    else ctx.stdout.write('read-only: processes cannot be ended from the page or the API\n');
    if (exposure.readToken !== null) ctx.stdout.write('read token: /metrics and /api/ need Authorization: Bearer with the token given\n');
    // Decided from the address the listener bound, so every spelling of loopback (127.1, ::ffff:127.0.0.1) counts.
    if (!isLoopbackAddress(bound.address)) {
      const who = exposure.readToken === null ? 'anyone who can reach this address' : 'anyone with the read token';
      ctx.stderr.write(paint('red', `WARNING: listening on ${host}, not loopback: ${who} sees every GPU process, its user and full command line${token === null ? '' : ', and with the action token can end processes'}.\n`));
    }
    await untilInterrupted(async (stopped) => {
      while (!stopped()) await stopped.sleep(3_600_000);
    });
    await new Promise<void>((resolve) => {
      app.close();
      bound.server.close(() => resolve());
      bound.server.closeAllConnections();
    });
    return { kind: 'ok' };
  } finally {
    app.close();
    await sampler.stop();
    state.close();
    source.close();
  }
};
