/**
 * Recordings written as deltas (format 4), through the built CLI: a copy of the bundled (real H100) recording reads the
 * same to every command that analyses it, a recorder killed with SIGKILL mid-run leaves a file that replays
 * up to its last whole sample, and a delta that does not fit is one error line, not a stack trace.
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, FAKE_SMI, expectNoHang, expectNoLostRecords, expectNoStackTrace, gpumem, tempDir } from './harness.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/doctor-example.ndjson', import.meta.url));
const T4 = fileURLToPath(new URL('../fixtures/nvidia-smi/tesla-t4-procs-driver-515.105.01.xml', import.meta.url));
const tmp = tempDir('gpumem-adv-rec-');
afterAll(tmp.remove);

/** The lines after the header that are samples (keyframes or deltas), whole ones only. */
const sampleLines = (text: string): string[] => text.split('\n').slice(1, -1).filter((l) => l.startsWith('{"timeMs":') || l.startsWith('{"delta":'));

describe('recordings written as deltas', () => {
  it('a copy of the bundled recording gives the same diagnosis and the same samples', async () => {
    const copy = join(tmp.dir, 'copy.ndjson');
    const rec = await gpumem(['record', '--replay', EXAMPLE, '--out', copy, '--interval', '10']);
    expectNoHang(rec, 'record --replay');
    expect(rec.code, rec.stderr).toBe(0);
    const text = readFileSync(copy, 'utf8');
    expect(JSON.parse(text.split('\n')[0]!).version).toBe(4);
    // Every one of the example's 40 samples (recorded on an H100): one whole, the rest deltas.
    expect(sampleLines(text)).toHaveLength(40);
    expect(sampleLines(text).filter((l) => l.startsWith('{"delta":')).length).toBe(sampleLines(text).length - 1);
    const [mine, theirs] = await Promise.all([copy, EXAMPLE].map((f) => gpumem(['diagnose', '--json', '--replay', f])));
    for (const r of [mine!, theirs!]) expectNoStackTrace(r, 'diagnose --replay');
    expect(mine!.code).toBe(theirs!.code);
    // The copy's header is this machine's (note, whether it runs in a container, which names the PID namespace
    // of a vanished pid): what was read from the samples must agree.
    const fromSamples = (out: string): unknown => {
      const { devices, accounting, users, window, findings } = JSON.parse(out.replace(/"pidNamespace":\s*"\w+"/g, '"pidNamespace": "-"'));
      return { devices, accounting, users, window, findings };
    };
    expect(fromSamples(mine!.stdout)).toEqual(fromSamples(theirs!.stdout));
    const watch = await gpumem(['status', '--watch', '--json', '--interval', '50', '--replay', copy]);
    expect(watch.code, watch.stderr).toBe(0);
    const original = await gpumem(['status', '--watch', '--json', '--interval', '50', '--replay', EXAMPLE]);
    const docs = (out: string): unknown[] => out.trim().split('\n').map((l) => {
      const { source: _source, ...rest } = JSON.parse(l);
      return rest;
    });
    expect(docs(watch.stdout)).toEqual(docs(original.stdout));
  });

  it('a recorder killed with SIGKILL mid-run: every whole sample replays', async () => {
    const out = join(tmp.dir, 'killed.ndjson');
    const child = spawn(process.execPath, [BIN, 'record', '--source', 'smi', '--interval', '20', '--out', out], {
      env: { PATH: `${FAKE_SMI}:${process.env.PATH}`, HOME: process.env.HOME, GPUMEM_FAKE_SMI_XML: T4, GPUMEM_NVML_LIB: '/nonexistent/libnvidia-ml.so.1' },
      stdio: 'ignore',
    });
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      try {
        if (sampleLines(readFileSync(out, 'utf8')).length >= 8) break;
      } catch {
        // not created yet
      }
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const text = readFileSync(out, 'utf8');
    const whole = sampleLines(text).length;
    expect(whole).toBeGreaterThanOrEqual(8);
    // And the same file cut in the middle of its last line, as a kill during a write leaves it.
    const cut = join(tmp.dir, 'cut.ndjson');
    writeFileSync(cut, text.endsWith('\n') ? text.slice(0, -7) : text);
    for (const [file, expected] of [[out, whole], [cut, whole - 1]] as const) {
      const r = await gpumem(['status', '--watch', '--json', '--interval', '50', '--replay', file]);
      expectNoHang(r, `status --watch --replay ${file}`);
      expectNoStackTrace(r, `status --watch --replay ${file}`);
      expect(r.code, r.stderr).toBe(0);
      expectNoLostRecords(r.stdout.trim().split('\n').length, expected, `samples replayed from ${file} (${statSync(file).size} bytes)`);
    }
  });

  it('a delta that does not fit the sample before it: one error line with the line number, exit 2', async () => {
    const copy = join(tmp.dir, 'bad.ndjson');
    await gpumem(['record', '--replay', EXAMPLE, '--out', copy, '--interval', '10']);
    const lines = readFileSync(copy, 'utf8').trimEnd().split('\n');
    const at = lines.findIndex((l) => l.startsWith('{"delta":'));
    lines[at] = JSON.stringify({ delta: { timeMs: 1, processes: { removed: [9999] } } });
    writeFileSync(copy, `${lines.join('\n')}\n`);
    const r = await gpumem(['doctor', '--replay', copy]);
    expectNoHang(r, 'doctor on a bad delta');
    expectNoStackTrace(r, 'doctor on a bad delta');
    expect(r.stderr).toMatch(new RegExp(`bad\\.ndjson:${at + 1}: delta\\.processes\\.removed\\[0\\] must be a position in the sample before`));
    expect(r.stderr.match(/^gpumem: error: /gm)).toHaveLength(1);
    expect(r.code).toBe(2);
  });
});
