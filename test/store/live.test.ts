/**
 * The live companion files: written atomically, read back only for processes whose (pid, start time) still
 * match /proc and whose supervisor is the same running process; malformed and stale files are ignored.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildLiveCompanionDoc, createCompanionState, applyCompanionMessage, type LiveCompanionDoc } from '../../src/core/companion/index.js';
import { readStartTicks } from '../../src/sources/index.js';
import { liveCompanionDir, liveCompanionPath, readLiveCompanion, removeLiveCompanion, writeLiveCompanion } from '../../src/store/index.js';
import { tempDir } from '../supervise/helpers/claims.js';

const cleanups: Array<() => void> = [];
afterEach(() => cleanups.splice(0).forEach((f) => f()));

const UUID = 'GPU-00000000-0000-4000-8000-000000000000';

function docFor(pid: number, startTicks: number | null, supervisor = { pid: process.pid, startTicks: readStartTicks(process.pid) }): LiveCompanionDoc {
  const state = createCompanionState();
  applyCompanionMessage(state, { schemaVersion: 1, type: 'devices', pid, timeMs: 1, devices: [{ device: 0, uuid: UUID, name: null, totalBytes: null }] });
  applyCompanionMessage(state, {
    schemaVersion: 1, type: 'stats', pid, timeMs: 2, seq: 1, devices: [{
      device: 0, allocatedBytes: 1024, reservedBytes: 4096, activeBytes: 1024, inactiveSplitBytes: 0, requestedBytes: 1000,
      peakAllocatedBytes: 2048, peakReservedBytes: 4096, peakActiveBytes: 2048, numAllocRetries: 1, numOoms: 0,
    }],
  });
  return buildLiveCompanionDoc(state, supervisor, 3, () => startTicks);
}

describe('live companion files', () => {
  it('round-trips a document for a live process and forgets it when the file is removed', () => {
    const t = tempDir('gpumem-live-');
    cleanups.push(t.remove);
    const env = { XDG_RUNTIME_DIR: t.dir };
    const path = liveCompanionPath(env, process.pid);
    expect(path).toBe(join(t.dir, 'gpumem', `companion-${process.pid}.json`));
    expect(writeLiveCompanion(path, docFor(process.pid, readStartTicks(process.pid)))).toBeNull();
    const read = readLiveCompanion(env);
    expect([...read.keys()]).toEqual([process.pid]);
    expect(read.get(process.pid)?.devices[0]?.stats.reservedBytes).toBe(4096);
    expect(readdirSync(liveCompanionDir(env))).toEqual([`companion-${process.pid}.json`]);
    removeLiveCompanion(path);
    expect(readLiveCompanion(env).size).toBe(0);
  });

  it('ignores a reused pid, a dead supervisor and a malformed file', async () => {
    const t = tempDir('gpumem-live-');
    cleanups.push(t.remove);
    const env = { XDG_RUNTIME_DIR: t.dir };
    const mine = readStartTicks(process.pid) as number;
    // The child pid with another start time: the kernel gave the pid to a new process.
    writeLiveCompanion(liveCompanionPath(env, 1), docFor(process.pid, mine + 1));
    // A supervisor that has exited (its pid no longer exists).
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('close', r));
    writeLiveCompanion(liveCompanionPath(env, dead.pid as number), docFor(process.pid, mine, { pid: dead.pid as number, startTicks: 5 }));
    mkdirSync(liveCompanionDir(env), { recursive: true });
    writeFileSync(join(liveCompanionDir(env), 'companion-7.json'), '{"format":"gpumem-companion-live","schemaVersion":1,"supervisorPid":1');
    expect(readLiveCompanion(env).size).toBe(0);
    // The same document with the right start time is believed.
    writeLiveCompanion(liveCompanionPath(env, 1), docFor(process.pid, mine));
    expect(readLiveCompanion(env).size).toBe(1);
  });
});
