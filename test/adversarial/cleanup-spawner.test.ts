/**
 * A process of the run that ignores SIGTERM and keeps spawning while cleanup ends the run: every process it
 * spawned — before, during and after the first round of signals — must be gone when gpumem exits, in its own
 * session (setsid) or in the child's group. Before cleanup looped, dozens carrying GPUMEM_RUN_MARK lived on
 * while the report said cleanup passed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { expectClean, gpumem, sleep, type World, world } from './supervise-helpers.js';

let w: World | null = null;
let tag = '';
afterEach(() => {
  for (const pid of tagged(tag)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  w?.remove();
  w = null;
});

/** Live processes whose command line starts with `name` (what `exec -a NAME` sets). */
function tagged(name: string): number[] {
  if (!name) return [];
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0')[0] === name) out.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return out;
}

describe('cleanup: a TERM-ignoring process that spawns while the run is ended', () => {
  for (const session of ['its own session (setsid)', "the child's process group"]) {
    it(`in ${session}: nothing it spawned survives gpumem, and the report lists them as ended`, async () => {
      w = world();
      tag = `LEFT-${randomBytes(4).toString('hex')}`;
      const spawner = `trap "" TERM; for i in $(seq 600); do (trap "" TERM; exec -a ${tag} sleep 60)& sleep .005; done; wait`;
      const script = `${session.startsWith('its own') ? 'setsid ' : ''}bash -c '${spawner}' & exit 0`;
      const r = await gpumem(['run', '--no-history', '--no-companion', '--json', '--grace-ms', '300', '--', 'bash', '-c', script], w.env, 40000);
      expectClean(r, 'gpumem run with a spawning leftover');
      // Any straggler had time to be re-parented and show up.
      await sleep(500);
      const left = tagged(tag);
      if (left.length > 0) throw new Error(`ESCAPE: ${left.length} processes of the run still running after gpumem exited ${r.code}`);
      const report = JSON.parse(r.stdout) as { attempts: Array<{ cleanup: { leftovers: Array<{ outcome: string }>; survivors: unknown[]; rounds: number } }> };
      const cleanup = report.attempts[0]!.cleanup;
      expect(cleanup.survivors).toEqual([]);
      expect(cleanup.leftovers.length).toBeGreaterThan(1);
      expect(r.code).toBe(0);
    }, 60000);
  }
});
