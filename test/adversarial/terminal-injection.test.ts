/**
 * Hostile strings from outside never reach the terminal raw: another user's command line (escape
 * sequences, a newline forging a row), OOM text in a log, tensor names in a safetensors header. Each case
 * runs the built CLI against real processes and files and checks no control byte is printed.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isPrintable, printable } from '../../src/core/index.js';
import { escapeHtml } from '../../src/cli/render/snapshot-html.js';
import { FAKE_SMI, expectNoEscape, expectNoHang, expectNoStackTrace, gpumem, tempDir } from './harness.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/nvidia-smi/', import.meta.url));
const tmp = tempDir('gpumem-inject-');
const FORGED_ROW = '\n    31337  root  70.00 GiB  n/a  /usr/bin/sshd';
const TITLE = '\u001b]0;pwned\u0007';
const CLEAR = '\u001b[2J\u001b[H';
const LINK = '\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\';
// A process with a hostile command line, as another user could start; it only sleeps.
const hostile = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', `${TITLE}${CLEAR}${LINK}${FORGED_ROW}`, '\u202eevil'], { stdio: 'ignore' });
afterAll(() => {
  hostile.kill('SIGKILL');
  tmp.remove();
});

describe('printable', () => {
  it('escapes every control character and leaves printable text alone', () => {
    expect(printable(`a${TITLE}b\nc\t\u202e`)).toBe('a\\e]0;pwned\\x07b\\nc\\t\\u202e');
    expect(printable('naïve 日本 ✓ /usr/bin/python3 -m torch')).toBe('naïve 日本 ✓ /usr/bin/python3 -m torch');
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => isPrintable(printable(s)) && !printable(s).includes('\n')));
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => (isPrintable(s) ? printable(s) === s : printable(s) !== s)));
  });

  it('HTML escaping also shows control characters escaped', () => {
    expect(escapeHtml(`<b>${TITLE}</b>`)).toBe('&lt;b&gt;\\e]0;pwned\\x07&lt;/b&gt;');
  });
});

describe('terminal injection', () => {
  it('status: a command line with escapes and a newline prints on one escaped row', async () => {
    const xml = join(tmp.dir, 'hostile.xml');
    writeFileSync(xml, readFileSync(join(FIXTURES, 'tesla-t4-procs-driver-515.105.01.xml'), 'utf8').replace('<pid>5762</pid>', `<pid>${hostile.pid}</pid>`));
    const r = await gpumem(['status', '--source', 'smi'], { env: { PATH: `${FAKE_SMI}:${process.env.PATH}`, GPUMEM_FAKE_SMI_XML: xml } });
    expectNoHang(r, 'status');
    expectNoStackTrace(r, 'status');
    expect(r.code).toBe(0);
    expectNoEscape(r.stdout, 'status');
    // One row for the process (the forged row's newline is escaped), its command shown escaped: long command
    // lines lose their middle, so the escapes that stay in view are checked, not one fixed part.
    const rows = r.stdout.split('\n').filter((l) => new RegExp(`^\\s*${hostile.pid}\\s`).test(l));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(/\\e\]0;p|\\x07|\\e\[|\\u202e/);
    expect(r.stdout).not.toMatch(/^\s*31337/m);
  });

  it('diagnose: the same process in the report and findings prints escaped', async () => {
    const xml = join(tmp.dir, 'hostile.xml');
    const r = await gpumem(['diagnose', '--source', 'smi', '--window', '0'], { env: { PATH: `${FAKE_SMI}:${process.env.PATH}`, GPUMEM_FAKE_SMI_XML: xml } });
    expectNoHang(r, 'diagnose');
    expectNoStackTrace(r, 'diagnose');
    expectNoEscape(r.stdout, 'diagnose');
    expect(r.stdout).not.toMatch(/^\s*31337/m);
  });

  it('explain: OOM text with escape sequences is echoed escaped', async () => {
    const log = join(tmp.dir, 'train.log');
    writeFileSync(log, `step 1\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.20 GiB is free. Process 4242 has 77.94 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.30 GiB is reserved by PyTorch but unallocated.${TITLE}${CLEAR}\n  File "${LINK}train.py", line 12, in ${TITLE}step\n`);
    const r = await gpumem(['explain', log]);
    expectNoHang(r, 'explain');
    expectNoStackTrace(r, 'explain');
    expect(r.stdout).toMatch(/OOM 1\/1/);
    expectNoEscape(r.stdout, 'explain');
  });

  it('estimate: tensor names with control characters in a safetensors header print escaped', async () => {
    const header = JSON.stringify({ [`w${CLEAR}\n31337`]: { dtype: 'F32', shape: [4, 4], data_offsets: [0, 64] }, constructor: { dtype: 'F32', shape: [4], data_offsets: [64, 80] } });
    const file = join(tmp.dir, `model${TITLE}.safetensors`);
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(BigInt(Buffer.byteLength(header)));
    writeFileSync(file, Buffer.concat([size, Buffer.from(header), Buffer.alloc(80)]));
    const r = await gpumem(['estimate', file, '--batch', '1']);
    expectNoHang(r, 'estimate');
    expectNoStackTrace(r, 'estimate');
    expectNoEscape(r.stdout + r.stderr, 'estimate');
    expect(`${r.stdout}${r.stderr}`).not.toContain('function Object');
  });
});
