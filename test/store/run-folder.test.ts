/** The run folder beside the history: created private, and never through a link or into a folder others can change. */
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRunFolder } from '../../src/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-runfolder-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('createRunFolder', () => {
  it('creates runs/<name> with mode 0700 and reuses a private folder of ours', () => {
    const path = join(dir, 'a', 'runs', '1');
    expect(createRunFolder(path)).toBe(path);
    expect(statSync(path).mode & 0o777).toBe(0o700);
    expect(createRunFolder(path)).toBe(path);
  });

  it('refuses a run folder that is a symbolic link, and creates nothing where it points', () => {
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    mkdirSync(join(dir, 'b', 'runs'), { recursive: true, mode: 0o700 });
    symlinkSync(elsewhere, join(dir, 'b', 'runs', '1'));
    expect(() => createRunFolder(join(dir, 'b', 'runs', '1'))).toThrow(/cannot create the run folder .*: refusing to use .*runs\/1: is a symbolic link/);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('refuses a runs folder that is a symbolic link (say, planted beside --db /tmp/h.db)', () => {
    const elsewhere = join(dir, 'elsewhere2');
    mkdirSync(elsewhere, { mode: 0o700 });
    mkdirSync(join(dir, 'c'), { mode: 0o700 });
    symlinkSync(elsewhere, join(dir, 'c', 'runs'));
    expect(() => createRunFolder(join(dir, 'c', 'runs', '7'))).toThrow(/refusing to use .*c\/runs: it is a symbolic link/);
    expect(existsSync(join(elsewhere, '7'))).toBe(false);
    expect(lstatSync(join(dir, 'c', 'runs')).isSymbolicLink()).toBe(true);
  });

  it('refuses a runs folder other users can write to, and a run folder open to them', () => {
    mkdirSync(join(dir, 'd', 'runs'), { recursive: true });
    chmodSync(join(dir, 'd', 'runs'), 0o777);
    expect(() => createRunFolder(join(dir, 'd', 'runs', '1'))).toThrow(/other users can write to it \(mode 777\)/);
    chmodSync(join(dir, 'd', 'runs'), 0o755);
    mkdirSync(join(dir, 'd', 'runs', '2'), { mode: 0o755 });
    chmodSync(join(dir, 'd', 'runs', '2'), 0o755);
    expect(() => createRunFolder(join(dir, 'd', 'runs', '2'))).toThrow(/is open to other users \(mode 755\)/);
  });
});
