/**
 * `gpumem explain` end to end: the built CLI on real files, globs, stdin and a growing file, checking
 * exit codes and that the JSON carries the parser's exact bytes.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, gpumemInProcess, type CliResult } from '../helpers/cli.js';

const SAMPLE = new URL('../fixtures/oom/train-sample.txt', import.meta.url).pathname;

const gpumem = (args: string[], input?: string, cwd?: string): Promise<CliResult> => gpumemInProcess(args, { input, cwd, env: { NO_COLOR: '1' } });

describe('gpumem explain (CLI)', () => {
  it('explains a log: exit 1, exact bytes in JSON, ranks merged, user frame', async () => {
    const r = await gpumem(['explain', SAMPLE, '--json']);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as { schemaVersion: number; events: Array<Record<string, unknown>> };
    expect(json.schemaVersion).toBe(1);
    expect(json.events).toHaveLength(1);
    const e = json.events[0] as Record<string, unknown>;
    expect(e.requestedBytes).toBe(Math.round(1.7 * 2 ** 30));
    expect(e.reservedUnallocatedBytes).toBe(Math.round(3.84 * 2 ** 30));
    expect(e.ranks).toEqual([0, 1]);
    expect(e.userFrame).toEqual({ file: '/home/ana/proj/train.py', line: 97, function: 'main' });
    expect((e.causes as Array<{ id: string }>)[0]?.id).toBe('fragmentation');
  });

  it('human report names the numbers and the fix', async () => {
    const r = await gpumem(['explain', SAMPLE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('requested 1.70 GiB');
    expect(r.stdout).toContain('PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True');
    expect(r.stdout).toContain('gpumem kill 48213');
  });

  it('--alloc-conf with expandable segments on stops suggesting it', async () => {
    const r = await gpumem(['explain', SAMPLE, '--alloc-conf', 'expandable_segments:True', '--json']);
    const causes = (JSON.parse(r.stdout) as { events: Array<{ causes: Array<{ id: string; fix: string }> }> }).events[0]?.causes ?? [];
    expect(causes.find((c) => c.id === 'fragmentation')?.fix).toMatch(/already on/);
  });

  it('stdin, no OOM: exit 0', async () => {
    const r = await gpumem(['explain', '-'], 'epoch 1 loss 0.5\nall good\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/No out-of-memory error found/);
  });

  it('globs and the snapshot pointer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-explain-'));
    copyFileSync(SAMPLE, join(dir, 'a.err'));
    writeFileSync(join(dir, 'b.err'), 'RuntimeError: CUDA error: out of memory\n');
    writeFileSync(join(dir, 'oom_snapshot.pickle'), '');
    const r = await gpumem(['explain', '*.err', '--json'], undefined, dir);
    const json = JSON.parse(r.stdout) as { inputs: string[]; snapshots: string[]; events: Array<{ file: string; family: string }> };
    expect(json.inputs).toEqual(['a.err', 'b.err']);
    expect(json.events.map((e) => [e.file, e.family])).toEqual([['a.err', 'pytorch-cuda'], ['b.err', 'cuda-runtime']]);
    expect(json.snapshots).toEqual(['oom_snapshot.pickle']);
    expect((await gpumem(['explain', '*.err'], undefined, dir)).stdout).toContain('gpumem snapshot oom_snapshot.pickle --what-if');
    // An absolute glob reads its own folder, whatever the working directory.
    const absolute = JSON.parse((await gpumem(['explain', join(dir, '*.err'), '--json'], undefined, tmpdir())).stdout) as { inputs: string[]; snapshots: string[] };
    expect(absolute.inputs).toEqual([join(dir, 'a.err'), join(dir, 'b.err')]);
    expect(absolute.snapshots).toEqual([join(dir, 'oom_snapshot.pickle')]);
  });

  it('bad input: missing file and folder give one error line and exit 2; binary input does not crash', async () => {
    const missing = await gpumem(['explain', '/nonexistent/x.log']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^gpumem: error: .*no such file\nhint: /);
    expect((await gpumem(['explain', tmpdir()])).code).toBe(2);
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-explain-bin-'));
    const bytes = Buffer.alloc(300_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 7) % 256;
    writeFileSync(join(dir, 'blob.bin'), bytes);
    const r = await gpumem(['explain', join(dir, 'blob.bin')]);
    expect([0, 1]).toContain(r.code);
    expect(r.stderr).toBe('');
  });

  it('a message cut by the 1 MiB read boundary, after Latin-1 (non-UTF-8) lines: found once, right line', async () => {
    const filler = Buffer.from('caf\xe9 cr\xe8me step 1 loss=0.5\n', 'latin1');
    const lines = Math.floor(((1 << 20) - 100) / filler.length);
    const head = Buffer.concat(Array.from({ length: lines }, () => filler));
    // The read boundary falls inside "out of memory" (the message starts 20 bytes before it).
    const pad = Buffer.from(`${'x'.repeat((1 << 20) - 20 - head.length - 1)}\n`);
    const message = 'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; 7.57 GiB already allocated; 18.25 MiB free; 7.74 GiB reserved in total by PyTorch)\n';
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-explain-boundary-'));
    writeFileSync(join(dir, 'train.log'), Buffer.concat([head, pad, Buffer.from(message), filler]));
    const r = await gpumem(['explain', join(dir, 'train.log'), '--json']);
    expect(r.code).toBe(1);
    const events = (JSON.parse(r.stdout) as { events: Array<{ line: number; requestedBytes: number; reservedTotalBytes: number }> }).events;
    expect(events.map((e) => [e.line, e.requestedBytes, e.reservedTotalBytes])).toEqual([[lines + 2, 20 * 2 ** 20, Math.round(7.74 * 2 ** 30)]]);
  });

  it('--follow explains an OOM appended to a growing file, and ends on SIGINT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-follow-'));
    const log = join(dir, 'train.log');
    writeFileSync(log, 'step 1\n');
    const child = spawn(process.execPath, [BIN, 'explain', '--follow', '--json', log], { env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => setTimeout(r, 400));
    appendFileSync(log, 'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; 7.57 GiB already allocated; 18.25 MiB free; 7.74 GiB reserved in total by PyTorch)\n');
    for (let i = 0; i < 50 && !out.includes('\n'); i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.on('close', r));
    const first = JSON.parse(out.split('\n')[0] as string) as { schemaVersion: number; event: { line: number; requestedBytes: number } };
    expect(first.schemaVersion).toBe(1);
    expect(first.event.line).toBe(2);
    expect(first.event.requestedBytes).toBe(20 * 2 ** 20);
    expect(code).toBe(1);
  });

  it('--follow starts over on a truncated log: the OOM after truncation is at its own line, not glued to old text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-follow-'));
    const log = join(dir, 'train.log');
    // The old text ends without a line feed, so a scanner that carried on would glue it to the new first line;
    // it is longer than the new text, because truncation is seen as the file getting shorter.
    writeFileSync(log, `${'step\n'.repeat(100)}RuntimeError: CUDA out of memory. Tried to allocate 99.00 MiB (GPU 0; 11.17 GiB total`);
    const child = spawn(process.execPath, [BIN, 'explain', '--follow', '--json', log], { env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => setTimeout(r, 400));
    writeFileSync(log, 'x\nRuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 11.17 GiB total capacity; 7.57 GiB already allocated; 18.25 MiB free; 7.74 GiB reserved in total by PyTorch)\n');
    for (let i = 0; i < 50 && !out.includes('"requestedBytes":20971520'); i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    await new Promise((r) => child.on('close', r));
    const events = out.trim().split('\n').map((l) => (JSON.parse(l) as { event: { line: number; requestedBytes: number } }).event);
    const last = events[events.length - 1];
    expect(last).toMatchObject({ line: 2, requestedBytes: 20 * 2 ** 20 });
  });
});
