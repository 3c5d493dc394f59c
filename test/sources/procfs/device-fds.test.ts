/** NVIDIA device fds read from real processes: a child holding stand-in device files open, one holding none. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readNvidiaDeviceFds } from '../../../src/sources/procfs/index.js';

const children: ChildProcess[] = [];
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'gpumem-devfds-')));
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A node child that opens `files` (and keeps them open), then says "ready". */
async function holding(files: string[]): Promise<number> {
  const code = `const fs=require('fs');const fds=${JSON.stringify(files)}.map((f)=>fs.openSync(f,'a'));process.stdout.write('ready');setInterval(()=>fds,1000);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  return child.pid as number;
}

describe('readNvidiaDeviceFds', () => {
  it('lists the open files under the device prefix, once each, and nothing else', async () => {
    const prefix = join(dir, 'nvidia');
    const pid = await holding([`${prefix}ctl`, `${prefix}0`, `${prefix}0`, `${prefix}-uvm`, join(dir, 'other.log')]);
    expect(readNvidiaDeviceFds(pid, { devicePrefix: prefix })).toEqual({ ok: true, paths: [`${prefix}-uvm`, `${prefix}0`, `${prefix}ctl`] });
  });

  it('finds none in a process that holds no device open (the default prefix /dev/nvidia included)', async () => {
    const pid = await holding([join(dir, 'plain.txt')]);
    expect(readNvidiaDeviceFds(pid, { devicePrefix: join(dir, 'nvidia') })).toEqual({ ok: true, paths: [] });
    expect(readNvidiaDeviceFds(pid)).toEqual({ ok: true, paths: [] });
  });

  it('gives a reason instead of a list when the fd folder cannot be read', () => {
    expect(readNvidiaDeviceFds(2 ** 22 + 12345)).toEqual({ ok: false, reason: 'process gone' });
    // A /proc whose fd entry is not a folder: the error becomes the reason, not an exception.
    const root = join(dir, 'proc');
    mkdirSync(join(root, '42'), { recursive: true });
    writeFileSync(join(root, '42', 'fd'), '');
    const read = readNvidiaDeviceFds(42, { procRoot: root });
    expect(read.ok).toBe(false);
    expect(read.ok ? '' : read.reason).toMatch(/ENOTDIR/);
  });
});
