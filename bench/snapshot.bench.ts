/**
 * Parse + analyse a large generated snapshot (default 1024 MiB; GPUMEM_BENCH_SNAPSHOT_MIB for another size)
 * with gpumem, and load the same file with Python's C unpickler in the same run. Prints both times, the
 * ratio and gpumem's peak RSS. Targets: ≤ 10 s per GiB, ≥ 3× faster than pickle.load, RSS ≤ 2× the file.
 * gpumem runs in a child process so its peak RSS is its own (read from /proc/self/status VmHWM), with
 * Node's default heap limit. The file is generated once under build/bench by test/fixtures/snapshot/gen.py
 * (for 1024 MiB that takes minutes and about 10 GB of memory, since Python builds the whole trace first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MIB = Number(process.env.GPUMEM_BENCH_SNAPSHOT_MIB ?? 1024);

const CHILD = `
const { readFileSync } = require('node:fs');
const t0 = process.hrtime.bigint();
const c0 = process.cpuUsage();
import(process.argv[1]).then(async ({ readSnapshotFile }) => {
  const { buildReport } = await import(process.argv[2]);
  const snap = readSnapshotFile(process.argv[3]);
  const readMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const report = buildReport(snap, { top: 10, requestBytes: 600 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(c0);
  const cpuMs = (cpu.user + cpu.system) / 1e3;
  const hwm = /VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  const d = report.devices[0];
  process.stdout.write(JSON.stringify({ ms, cpuMs, readMs, rssBytes: hwm ? Number(hwm[1]) * 1024 : null, events: d ? d.trace.eventCount : 0, peak: d ? d.trace.peak.allocatedBytes : 0 }));
});`;

export async function run(): Promise<void> {
  const dir = `${ROOT}build/bench`;
  mkdirSync(dir, { recursive: true });
  const file = `${dir}/snapshot-${MIB}MiB.pickle`;
  if (!existsSync(file)) {
    process.stdout.write(`generating ${file} …\n`);
    const gen = spawnSync('python3', [`${ROOT}test/fixtures/snapshot/gen.py`, 'bench', file, String(MIB)], { stdio: 'inherit' });
    if (gen.status !== 0) throw new Error('snapshot generator failed');
  }
  const bytes = statSync(file).size;
  const ours = spawnSync(
    process.execPath,
    ['-e', CHILD, `${ROOT}dist/sources/snapshot-file.js`, `${ROOT}dist/core/snapshot/index.js`, file],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (ours.status !== 0) throw new Error(`gpumem side failed: ${ours.stderr}`);
  const g = JSON.parse(ours.stdout) as { ms: number; cpuMs: number; readMs: number; rssBytes: number | null; events: number; peak: number };
  const py = spawnSync('python3', ['-c', 'import pickle,resource,sys,time\nt=time.perf_counter()\npickle.load(open(sys.argv[1],"rb"))\nprint((time.perf_counter()-t)*1000, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)', file], { encoding: 'utf8' });
  if (py.status !== 0) throw new Error(`python side failed: ${py.stderr}`);
  const [pyMs, pyRssKib] = py.stdout.trim().split(' ').map(Number) as [number, number];
  const gib = bytes / 2 ** 30;
  const lines = [
    `file: ${(bytes / 2 ** 20).toFixed(0)} MiB, ${g.events} trace events`,
    `gpumem parse+analyse: ${(g.ms / 1000).toFixed(2)} s (${(g.ms / 1000 / gib).toFixed(2)} s/GiB; target ≤ 10 s/GiB) = read ${(g.readMs / 1000).toFixed(2)} s + analyse ${((g.ms - g.readMs) / 1000).toFixed(2)} s`,
    // On a shared machine wall time includes the wait for a core; CPU time is what the work itself costs.
    `gpumem CPU time:      ${(g.cpuMs / 1000).toFixed(2)} s (${(g.cpuMs / 1000 / gib).toFixed(2)} s/GiB; load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores)`,
    `python pickle.load:   ${(pyMs / 1000).toFixed(2)} s (peak RSS ${(pyRssKib / 1024).toFixed(0)} MiB = ${((pyRssKib * 1024) / bytes).toFixed(2)}× the file)`,
    `ratio python/gpumem:  ${(pyMs / g.ms).toFixed(2)}× (target ≥ 3×)`,
    `gpumem peak RSS:      ${g.rssBytes === null ? 'n/a' : `${(g.rssBytes / 2 ** 20).toFixed(0)} MiB = ${(g.rssBytes / bytes).toFixed(2)}× the file (target ≤ 2×)`}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
