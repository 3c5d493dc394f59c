/**
 * The GPU check kit (bench/gpu/run-all.sh) in its dry run, which needs no GPU: the same steps and lanes on the
 * fake NVML driver, the fake nvidia-smi, the fake torch and the committed H100 snapshots. The call runs the quiet
 * checks one after another and then the lanes side by side, packs each result into $OUT as soon as it finishes,
 * prints the summary table last, and skips what no longer fits its budget. The companion-overhead step measures
 * the stream (the first H100 run got "stats messages 0") and fails with the reason when there is none.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(__dirname, '../..');
const KIT = join(ROOT, 'bench/gpu/run-all.sh');
const dir = mkdtempSync(join(tmpdir(), 'gpumem-gpu-kit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface StepSummary { status: string; exitCode: number; startS: number; endS: number; headline: string }
interface Summary { schemaVersion: number; kind: string; dryRun: boolean; steps: Record<string, StepSummary> }

const readSummary = (path: string): Summary | null => {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Summary;
  } catch {
    return null;
  }
};

/** Runs the kit; `seen` collects the step names of every summary $OUT held while it ran. */
function runKit(out: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; seen: string[][] }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [KIT, ...args], { cwd: ROOT, env: { ...process.env, OUT: out, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stdout += d.toString()));
    const seen: string[][] = [];
    const label = args.length === 1 ? 'dry-run-all' : 'dry-run-steps';
    const poll = setInterval(() => {
      const s = readSummary(join(out, `summary-${label}.json`));
      const names = s ? Object.keys(s.steps).sort() : [];
      if (names.length > 0 && JSON.stringify(seen[seen.length - 1]) !== JSON.stringify(names)) seen.push(names);
    }, 100);
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, seen });
    });
  });
}

const LANES = ['accuracy', 'companion', 'snapshot', 'record'];

describe('bench/gpu/run-all.sh --dry-run', () => {
  it('runs the quiet checks first, then the lanes in parallel, packs each result as it ends and prints the table last', async () => {
    const out = join(dir, 'all');
    const r = await runKit(out, ['--dry-run'], { ACCURACY_ARGS: '--configs gpt2-amp-adamw-full' });
    expect(r.code, r.stdout).toBe(0);
    const summary = readSummary(join(out, 'summary-dry-run-all.json'))!;
    expect(summary.kind).toBe('gpumem.gpu-check.summary');
    expect(summary.dryRun).toBe(true);
    const steps = summary.steps;
    expect(Object.keys(steps).sort()).toEqual(['accuracy', 'bench', 'companion', 'env', 'record', 'snapshot', 'truth']);
    for (const [name, s] of Object.entries(steps)) expect(`${name}: ${s.status}`).toBe(`${name}: ok`);
    // Order: env, truth and bench one after another; every lane starts after bench ended and all lanes overlap.
    expect(steps.truth!.startS).toBeGreaterThanOrEqual(steps.env!.endS);
    expect(steps.bench!.startS).toBeGreaterThanOrEqual(steps.truth!.endS);
    const lanes = LANES.map((n) => steps[n]!);
    for (const lane of lanes) expect(lane.startS).toBeGreaterThanOrEqual(steps.bench!.endS);
    expect(Math.max(...lanes.map((l) => l.startS))).toBeLessThanOrEqual(Math.min(...lanes.map((l) => l.endS)));
    // Results came back step by step: a summary with the quiet steps and without the lanes was in $OUT mid-run.
    expect(r.seen.some((names) => names.includes('bench') && !names.includes('companion'))).toBe(true);
    // The table is the last thing printed before the list of result files, one row per step.
    const tail = r.stdout.trimEnd().split('\n');
    const at = tail.findIndex((l) => l.startsWith('summary of bash bench/gpu/run-all.sh --dry-run'));
    expect(at).toBeGreaterThan(0);
    expect(tail.slice(at + 2, at + 9).map((l) => l.trim().split(/\s+/)[0]).sort()).toEqual(Object.keys(steps).sort());
    expect(tail.slice(at + 9).join('\n')).toMatch(/results: .*gpu-check-dry-run-all\.tar\.gz/);

    const unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked);
    expect(spawnSync('tar', ['-xzf', join(out, 'gpu-check-dry-run-all.tar.gz'), '-C', unpacked]).status).toBe(0);
    const w = join(unpacked, 'gpu-check-dry-run-all');
    const overhead = JSON.parse(readFileSync(join(w, 'companion/companion-overhead.json'), 'utf8'));
    for (const rate of ['10Hz', '50Hz']) {
      expect(overhead[rate].statsMessages).toBeGreaterThan(0);
      expect(overhead[rate].streamMatches).toBe(true);
      expect(overhead[rate].messages.hello).toBe(1);
    }
    for (const f of ['before', 'oom']) expect(existsSync(join(w, `snapshot/${f}.compare.json`))).toBe(true);
    expect(JSON.parse(readFileSync(join(w, 'truth/status-nvml.json'), 'utf8')).devices).toHaveLength(1);
    // The session without attaching the GPUs is measured beside nvmlInit_v2 and named in the step's headline.
    expect(JSON.parse(readFileSync(join(w, 'bench/status-bench.json'), 'utf8')).sessionNoAttach.queryRc).toEqual([0, 0, 0]);
    expect(steps.bench!.headline).toMatch(/nvmlInit \d+\.\d ms CPU \(without attaching \d+\.\d ms, first query \d+\.\d ms, rc \[0, 0, 0\]\)/);
    expect(readFileSync(join(w, 'record/doctor-recording.ndjson'), 'utf8').split('\n').length).toBeGreaterThan(2);
  }, 300_000);

  it('skips a step that no longer fits the budget, and still returns the summary of what ran', async () => {
    const out = join(dir, 'budget');
    // 36 s less the 20 s kept for packing: env gets at most 16 s, and after it nothing has 15 s left.
    const r = await runKit(out, ['--dry-run', 'truth', 'companion'], { GPU_CHECK_BUDGET_S: '36' });
    expect(r.code, r.stdout).toBe(0);
    const steps = readSummary(join(out, 'summary-dry-run-steps.json'))!.steps;
    expect(['ok', 'timeout']).toContain(steps.env!.status);
    expect(steps.truth!.status).toBe('skipped');
    expect(steps.companion!.status).toBe('skipped');
  }, 120_000);

  it('an unknown step is refused before anything runs', () => {
    const r = spawnSync('bash', [KIT, '--dry-run', 'nonsense'], { cwd: ROOT, env: { ...process.env, OUT: join(dir, 'unknown') }, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown step nonsense/);
  });
});

describe('bench/gpu/companion-overhead.py', () => {
  it('fails with the reason when the companion never streams, instead of printing a row that measured nothing', () => {
    const site = join(dir, 'silent-site');
    mkdirSync(site);
    writeFileSync(join(site, 'sitecustomize.py'), '# a sitecustomize that starts no companion\n');
    const r = spawnSync('python3', [join(ROOT, 'bench/gpu/companion-overhead.py'), '--fake-torch', '--steps', '30', '--site', site, '--out', join(dir, 'silent.json')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/10Hz: no hello: the companion never connected/);
    const doc = JSON.parse(readFileSync(join(dir, 'silent.json'), 'utf8'));
    expect(doc['10Hz'].statsMessages).toBe(0);
    expect(doc['10Hz'].streamMatches).toBeNull();
  }, 60_000);
});
