/**
 * store/new-file.ts on real files: new files, replaced files, and every name it must not write through,
 * including a link or file that appears between the look at the target and its creation.
 */
import { chownSync, closeSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GpumemError } from '../../src/core/errors.js';
import { createNewFile, writeNewFile } from '../../src/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumem-newfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** A fresh folder per case, so leftovers of one case cannot hide in another's. */
function folder(): string {
  const d = join(dir, String(n++));
  mkdirSync(d);
  return d;
}

/** The mode a new file gets from the umask, learnt the ordinary way. */
function umaskMode(d: string): number {
  const probe = join(d, 'probe');
  writeFileSync(probe, '');
  const mode = statSync(probe).mode & 0o777;
  rmSync(probe);
  return mode;
}

function refusal(fn: () => unknown): GpumemError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GpumemError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

const what = { label: '--html' };

describe('writeNewFile', () => {
  it('creates a new file with the umask\'s mode and leaves no temporary behind', () => {
    const d = folder();
    writeNewFile(join(d, 'r.html'), '<p>new</p>', what);
    expect(readFileSync(join(d, 'r.html'), 'utf8')).toBe('<p>new</p>');
    expect(statSync(join(d, 'r.html')).mode & 0o777).toBe(umaskMode(d));
    expect(readdirSync(d)).toEqual(['r.html']);
  });

  it('replaces a regular file of ours as a whole: its mode is kept, a hard link to it keeps the old content', () => {
    const d = folder();
    const target = join(d, 'r.html');
    writeFileSync(target, 'old', { mode: 0o600 });
    linkSync(target, join(d, 'other-name'));
    writeNewFile(target, 'new', what);
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(d, 'other-name'), 'utf8')).toBe('old');
  });

  it('refuses a symbolic link, to a file or dangling, and leaves its target alone', () => {
    const d = folder();
    writeFileSync(join(d, 'victim'), 'precious', { mode: 0o600 });
    symlinkSync(join(d, 'victim'), join(d, 'r.html'));
    symlinkSync(join(d, 'not-yet'), join(d, 'dangling.html'));
    const e = refusal(() => writeNewFile(join(d, 'r.html'), 'x', { label: '--html', shown: 'r.html' }));
    expect(e.code).toBe('INPUT_UNSAFE');
    expect(e.message).toMatch(/^--html: refusing to write r\.html: it is a symbolic link to .*victim \(owned by uid \d+\)$/);
    expect(e.hint).toMatch(/never writes through a symbolic link/);
    expect(refusal(() => writeNewFile(join(d, 'dangling.html'), 'x', what)).code).toBe('INPUT_UNSAFE');
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious');
    expect(existsSync(join(d, 'not-yet'))).toBe(false);
    expect(readdirSync(d).sort()).toEqual(['dangling.html', 'r.html', 'victim']);
  });

  it('refuses a directory and a FIFO', () => {
    const d = folder();
    mkdirSync(join(d, 'sub'));
    spawnSync('mkfifo', [join(d, 'fifo')]);
    expect(refusal(() => writeNewFile(join(d, 'sub'), 'x', what)).message).toMatch(/it is a directory/);
    expect(refusal(() => writeNewFile(join(d, 'fifo'), 'x', what)).message).toMatch(/it is not a regular file/);
  });

  it.skipIf(process.getuid?.() !== 0)('refuses a regular file another user owns (needs root to chown)', () => {
    const d = folder();
    writeFileSync(join(d, 'theirs'), 'theirs');
    chownSync(join(d, 'theirs'), 4242, 4242);
    expect(refusal(() => writeNewFile(join(d, 'theirs'), 'x', what)).message).toMatch(/it belongs to uid 4242, not to uid 0/);
    expect(readFileSync(join(d, 'theirs'), 'utf8')).toBe('theirs');
  });

  it('a link planted between the look and the write is replaced by the new file, never written through', () => {
    const d = folder();
    writeFileSync(join(d, 'victim'), 'precious');
    const target = join(d, 'r.html');
    writeNewFile(target, 'mine', what, { afterCheck: () => symlinkSync(join(d, 'victim'), target) });
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious');
    expect(lstatSync(target).isFile()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('mine');
  });

  it('system errors come through as they are, and the temporary is removed', () => {
    const d = folder();
    expect(() => writeNewFile(join(d, 'missing', 'r.html'), 'x', what)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    // The target turns into a folder after the look: the rename fails and nothing is left behind.
    expect(() => writeNewFile(join(d, 'r.html'), 'x', what, { afterCheck: () => mkdirSync(join(d, 'r.html')) })).toThrow(expect.objectContaining({ code: 'EISDIR' }));
    expect(readdirSync(d)).toEqual(['r.html']);
  });
});

describe('createNewFile', () => {
  it('creates a new file and returns a descriptor that writes to it', () => {
    const d = folder();
    const fd = createNewFile(join(d, 'rec.ndjson'), { label: '--out' });
    writeSync(fd, 'line\n');
    closeSync(fd);
    expect(readFileSync(join(d, 'rec.ndjson'), 'utf8')).toBe('line\n');
    expect(statSync(join(d, 'rec.ndjson')).mode & 0o777).toBe(umaskMode(d));
  });

  it('replaces a file of ours at once, without truncating it in place: a hard link keeps the old content', () => {
    const d = folder();
    const target = join(d, 'rec.ndjson');
    writeFileSync(target, 'old recording', { mode: 0o640 });
    linkSync(target, join(d, 'backup'));
    const fd = createNewFile(target, { label: '--out' });
    expect(readFileSync(target, 'utf8')).toBe('');
    writeSync(fd, 'new\n');
    closeSync(fd);
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(statSync(target).mode & 0o777).toBe(0o640);
    expect(readFileSync(join(d, 'backup'), 'utf8')).toBe('old recording');
    expect(readdirSync(d).sort()).toEqual(['backup', 'rec.ndjson']);
  });

  it('O_EXCL race: a link that appears between the look and the open is refused, its target untouched', () => {
    const d = folder();
    writeFileSync(join(d, 'victim'), 'precious', { mode: 0o600 });
    const target = join(d, 'rec.ndjson');
    const e = refusal(() => createNewFile(target, { label: '--out' }, { afterCheck: () => symlinkSync(join(d, 'victim'), target) }));
    expect(e.code).toBe('INPUT_UNSAFE');
    expect(e.message).toMatch(/^--out: refusing to write .*rec\.ndjson: something appeared under that name while gpumem was creating it; nothing was written to it$/);
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious');
  });

  it('O_EXCL race: a regular file that appears between the look and the open is refused and kept', () => {
    const d = folder();
    const target = join(d, 'rec.ndjson');
    expect(refusal(() => createNewFile(target, { label: '--out' }, { afterCheck: () => writeFileSync(target, 'someone else') })).code).toBe('INPUT_UNSAFE');
    expect(readFileSync(target, 'utf8')).toBe('someone else');
  });

  it('refuses a symbolic link already there', () => {
    const d = folder();
    writeFileSync(join(d, 'victim'), 'precious');
    symlinkSync(join(d, 'victim'), join(d, 'rec.ndjson'));
    expect(refusal(() => createNewFile(join(d, 'rec.ndjson'), { label: '--out' })).message).toMatch(/it is a symbolic link/);
    expect(readFileSync(join(d, 'victim'), 'utf8')).toBe('precious');
  });
});
