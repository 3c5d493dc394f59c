/**
 * A refused live-companion folder (open to others, or a symlink) is said once, with its path and the reason,
 * instead of the live file being dropped in silence; the file is never written there.
 */
import { chmodSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyCompanionMessage, createCompanionState } from '../../src/core/companion/index.js';
import { liveCompanionDir, liveCompanionPath } from '../../src/store/index.js';
import { createLivePublisher } from '../../src/supervise/companion/live-publish.js';
import { tempDir } from './harness.js';

const UUID = 'GPU-00000000-0000-4000-8000-000000000000';
const tmp = tempDir('gpumem-adv-livewarn-');
afterAll(tmp.remove);

/** Publishes three different states 300 ms apart (each would be written) and returns the warnings. */
function publishThrice(env: Record<string, string>): string[] {
  const warnings: string[] = [];
  const state = createCompanionState();
  applyCompanionMessage(state, { schemaVersion: 1, type: 'devices', pid: process.pid, timeMs: 1, devices: [{ device: 0, uuid: UUID, name: null, totalBytes: null }] });
  let t = 0;
  const publisher = createLivePublisher(liveCompanionPath(env, process.pid), state, () => t, (line) => warnings.push(line));
  for (let seq = 1; seq <= 3; seq++) {
    applyCompanionMessage(state, {
      schemaVersion: 1, type: 'stats', pid: process.pid, timeMs: seq, seq, devices: [{
        device: 0, allocatedBytes: seq, reservedBytes: seq, activeBytes: seq, inactiveSplitBytes: 0, requestedBytes: seq,
        peakAllocatedBytes: seq, peakReservedBytes: seq, peakActiveBytes: seq, numAllocRetries: 0, numOoms: 0,
      }],
    });
    t += 300;
    publisher.maybePublish();
  }
  return warnings;
}

describe('refused live-companion folder', () => {
  it('a folder of ours open to other users: one warning with the path and the reason, no file', () => {
    const env = { TMPDIR: join(tmp.dir, 'open') };
    mkdirSync(liveCompanionDir(env), { recursive: true });
    chmodSync(liveCompanionDir(env), 0o777);
    const warnings = publishThrice(env);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(liveCompanionDir(env));
    expect(warnings[0]).toMatch(/open to other users \(mode 777\)/);
    expect(existsSync(liveCompanionPath(env, process.pid))).toBe(false);
  });

  it('a folder that is a symlink: one warning naming it a symbolic link', () => {
    const env = { TMPDIR: join(tmp.dir, 'link') };
    mkdirSync(env.TMPDIR);
    mkdirSync(join(tmp.dir, 'elsewhere'), { mode: 0o700 });
    symlinkSync(join(tmp.dir, 'elsewhere'), liveCompanionDir(env));
    const warnings = publishThrice(env);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/symbolic link/);
  });

  it('a private folder: written, no warning', () => {
    const env = { TMPDIR: join(tmp.dir, 'fine') };
    mkdirSync(env.TMPDIR);
    expect(publishThrice(env)).toEqual([]);
    expect(existsSync(liveCompanionPath(env, process.pid))).toBe(true);
  });
});
