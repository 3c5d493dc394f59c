/** `gpumem snapshot` end to end: the real binary on generated snapshots, hostile files and a diff. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpumemInProcess, type CliResult } from '../helpers/cli.js';
import { DIR, siteRows, type Expected } from '../core/snapshot/fixtures.js';


const gpumem = (...args: string[]): Promise<CliResult> => gpumemInProcess(args, { env: { NO_COLOR: '1' } });

describe('gpumem snapshot', () => {
  it('--json carries the schema version and the exact numbers', async () => {
    const expected = JSON.parse(readFileSync(`${DIR}/current-pcpp.expected.json`, 'utf8')) as Expected;
    const r = await gpumem('snapshot', `${DIR}/current-pcpp.pickle`, '--json', '--request', '24MiB', '--top', '50');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.schemaVersion).toBe(1);
    expect(out.unknownKeys).toEqual(['trace_alloc_max_entries', 'host_segments']);
    for (const d of out.devices) {
      const e = expected.devices[String(d.device)]!;
      expect(d.summary.reservedBytes).toBe(e.reservedBytes);
      expect(d.request.unusableFreeBytes).toBe(e.request.unusableFreeBytes);
      expect(d.trace.peak.allocatedBytes).toBe(e.peak.allocatedBytes);
      expect(d.sites.map((s: { site: string; bytes: number; count: number }) => [s.site, s.bytes, s.count]).sort()).toEqual(siteRows(e.sitesNow));
    }
  });

  it('prints the text report with sizes formatted once', async () => {
    const r = await gpumem('snapshot', `${DIR}/legacy-p2.pickle`, '--top', '3');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Snapshot \(history format\), 2 device/);
    expect(r.stdout).toMatch(/Who holds memory now \(top 3 of \d+ sites\)/);
    expect(r.stdout).toMatch(/OOM at event \d+/);
  });

  it('refuses a code-running pickle with one error line, a hint and exit 2', async () => {
    const r = await gpumem('snapshot', `${DIR}/hostile/exploit-global.pkl`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^gpumem: error: .*exploit-global\.pkl: refusing pickle opcode GLOBAL at byte 2/);
    expect(r.stderr).toMatch(/\nhint: /);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
    expect(r.stdout).toBe('');
  });

  it('reports truncation, missing files and usage mistakes', async () => {
    expect((await gpumem('snapshot', `${DIR}/hostile/truncated.pkl`)).stderr).toMatch(/truncated/);
    const missing = await gpumem('snapshot', '/nonexistent/x.pickle');
    expect([missing.code, /no such file/.test(missing.stderr)]).toEqual([2, true]);
    expect((await gpumem('snapshot')).code).toBe(2);
    expect((await gpumem('snapshot', 'diff', 'a')).stderr).toMatch(/two files/);
  });

  it('diff refuses --html and --request instead of ignoring them; an unwritable --html path is exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-snap-'));
    const page = join(dir, 'diff.html');
    const diff = await gpumem('snapshot', 'diff', `${DIR}/diff-a.pickle`, `${DIR}/diff-b.pickle`, '--html', page, '--request', '1MiB');
    expect(diff.code).toBe(2);
    expect(diff.stderr).toMatch(/^gpumem: error: snapshot diff does not take --html or --request\nhint: /);
    expect(existsSync(page)).toBe(false);
    const unwritable = await gpumem('snapshot', `${DIR}/current-p5.pickle`, '--html', join(dir, 'missing-folder', 'r.html'));
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toMatch(/^gpumem: error: --html: cannot write .*r\.html \(ENOENT\)\nhint: /);
  });

  it('reads a JSON snapshot like the pickle of the same data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-snap-'));
    const file = join(dir, 'snap.json');
    const fromPickle = JSON.parse((await gpumem('snapshot', `${DIR}/diff-b.pickle`, '--json')).stdout);
    const py = spawnSync('python3', ['-c', `import pickle,json,sys; json.dump(pickle.load(open(sys.argv[1],'rb')), open(sys.argv[2],'w'))`, `${DIR}/diff-b.pickle`, file]);
    expect(py.status).toBe(0);
    const fromJson = JSON.parse((await gpumem('snapshot', file, '--json')).stdout);
    expect(fromJson.devices).toEqual(fromPickle.devices);
  });

  it('diff lists what grew by site, matching the generator', async () => {
    const expected = JSON.parse(readFileSync(`${DIR}/diff.expected.json`, 'utf8')) as { before: Record<string, [number, number]>; after: Record<string, [number, number]> };
    const r = await gpumem('snapshot', 'diff', `${DIR}/diff-a.pickle`, `${DIR}/diff-b.pickle`, '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.kind).toBe('gpumem.snapshot.diff');
    const grew = Object.keys(expected.after).filter((s) => (expected.after[s]![0] ?? 0) !== (expected.before[s]?.[0] ?? 0));
    expect(out.sites.map((s: { site: string }) => s.site).sort()).toEqual(grew.sort());
    for (const s of out.sites) expect(s.deltaBytes).toBe(expected.after[s.site]![0] - (expected.before[s.site]?.[0] ?? 0));
    expect(out.sites[0].deltaBytes).toBeGreaterThanOrEqual(40 * 3 * 1024 * 1024 * 0.5);
  });

  it('--html writes a page with no external reference', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-snap-'));
    const out = join(dir, 'r.html');
    expect((await gpumem('snapshot', `${DIR}/current-p5.pickle`, '--html', out)).code).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toMatch(/<svg class="timeline"/);
    expect(html).not.toMatch(/(src|href)=["']?https?:/);
  });
});
