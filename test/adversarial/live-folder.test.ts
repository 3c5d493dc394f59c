/**
 * The live-companion folder in a shared tmp directory, attacked by a second local user: a folder created
 * first by them, symlinks planted where our files go, a symlink to /dev/zero where diagnose reads. Root's
 * gpumem must refuse their folder, never write through their links and never read a device.
 */
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildLiveCompanionDoc, createCompanionState } from '../../src/core/companion/index.js';
import { readStartTicks } from '../../src/sources/index.js';
import { liveCompanionDir, liveCompanionPath, readLiveCompanion, writeLiveCompanion } from '../../src/store/index.js';
import { FAKE_SMI, asUser, expectNoHang, expectNoStackTrace, gpumem, secondUser, tempDir } from './harness.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/nvidia-smi/', import.meta.url));
const { user, reason, remove: removeUser } = secondUser();
const tmp = tempDir('gpumem-shared-tmp-');
// A shared, sticky, world-writable folder standing in for /tmp.
chmodSync(tmp.dir, 0o1777);
afterAll(() => {
  tmp.remove();
  removeUser();
});

const emptyDoc = () => buildLiveCompanionDoc(createCompanionState(), { pid: process.pid, startTicks: readStartTicks(process.pid) }, 1, () => null);

describe.skipIf(!user)(`live-companion folder vs a second user${user ? '' : ` (skipped: ${reason})`}`, () => {
  it("refuses a folder another user created first and never writes through their symlinks", () => {
    const shared = join(tmp.dir, 'a');
    mkdirSync(shared, { mode: 0o1777 });
    chmodSync(shared, 0o1777);
    const env = { TMPDIR: shared };
    const dir = liveCompanionDir(env);
    const victim = join(tmp.dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const path = liveCompanionPath(env, process.pid);
    // Everything a guessing attacker can plant: the final name and the temporary names older builds used.
    asUser(user!, `mkdir -m 0777 '${dir}' && ln -s '${victim}' '${path}.${process.pid}.tmp' && ln -s '${victim}' '${path}'`);
    const error = writeLiveCompanion(path, emptyDoc());
    expect(error).toMatch(/refusing to use .*belongs to uid/);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('refuses a folder that is a symlink to a folder of theirs', () => {
    const shared = join(tmp.dir, 'b');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const env = { TMPDIR: shared };
    asUser(user!, `mkdir -m 0700 '${shared}/theirs' && ln -s '${shared}/theirs' '${liveCompanionDir(env)}'`);
    expect(writeLiveCompanion(liveCompanionPath(env, process.pid), emptyDoc())).toMatch(/symbolic link/);
  });

  it('doctor does not read a symlink to /dev/zero planted in the folder (finishes, bounded memory)', async () => {
    const shared = join(tmp.dir, 'c');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const env = { TMPDIR: shared };
    asUser(user!, `mkdir -m 0777 '${liveCompanionDir(env)}' && ln -s /dev/zero '${liveCompanionDir(env)}/companion-1.json'`);
    const xml = join(FIXTURES, 'tesla-t4-procs-driver-515.105.01.xml');
    const r = await gpumem(['doctor', '--source', 'smi', '--window', '0'], { env: { PATH: `${FAKE_SMI}:${process.env.PATH}`, GPUMEM_FAKE_SMI_XML: xml, TMPDIR: shared }, timeoutMs: 15_000 });
    expectNoHang(r, 'doctor with a /dev/zero live file');
    expectNoStackTrace(r, 'doctor with a /dev/zero live file');
    // doctor exits 1 only for a critical finding (docs/diagnose.md); either way it must have printed its report.
    expect(r.stdout).toMatch(/^gpumem doctor: 1 sample/m);
    expect(r.peakRssBytes).toBeLessThan(400 * 1024 * 1024);
    expect(readLiveCompanion(env).size).toBe(0);
  });
});

describe('live-companion folder, own files', () => {
  it('a symlink to /dev/zero, a FIFO or an oversized file in our own folder is skipped, not read', () => {
    const t = tempDir('gpumem-live-own-');
    const env = { XDG_RUNTIME_DIR: t.dir };
    const path = liveCompanionPath(env, process.pid);
    expect(writeLiveCompanion(path, emptyDoc())).toBeNull();
    const dir = liveCompanionDir(env);
    symlinkSync('/dev/zero', join(dir, 'companion-2.json'));
    writeFileSync(join(dir, 'companion-3.json'), Buffer.alloc(5 * 1024 * 1024, 0x20));
    const started = Date.now();
    expect(readLiveCompanion(env).size).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    t.remove();
  });
});
