/**
 * Pieces of a fake fleet: a /proc that shows chosen cgroup paths for real processes (the procfs source takes
 * a proc root), a live companion file as `gpumem run` publishes it, and `gpumem serve` started as a user
 * starts it, on a fake driver scenario of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyCompanionMessage, buildLiveCompanionDoc, createCompanionState } from '../../src/core/companion/index.js';
import { readStartTicks } from '../../src/sources/index.js';
import { liveCompanionPath, writeLiveCompanion } from '../../src/store/index.js';

const BIN = fileURLToPath(new URL('../../dist/cli/bin.js', import.meta.url));
const PER_PID = ['stat', 'status', 'cmdline', 'environ', 'statm', 'exe', 'fd', 'cgroup'];

/**
 * A proc root at `root` mirroring the real /proc for `pids` (each file a link to the real one), except that a
 * pid given in `cgroups` reads that text as its /proc/PID/cgroup: how a process inside a Slurm job's or a
 * Kubernetes pod's cgroup looks, without creating cgroups (which needs root and a writable hierarchy).
 */
export function mirrorProc(root: string, pids: number[], cgroups: ReadonlyMap<number, string>): void {
  mkdirSync(root, { recursive: true });
  for (const name of ['stat', 'self', '1']) symlinkSync(`/proc/${name}`, join(root, name));
  for (const pid of pids) {
    const dir = join(root, String(pid));
    mkdirSync(dir);
    for (const name of PER_PID) {
      const text = name === 'cgroup' ? cgroups.get(pid) : undefined;
      if (text === undefined) symlinkSync(`/proc/${pid}/${name}`, join(dir, name));
      else writeFileSync(join(dir, name), text);
    }
  }
}

/**
 * Publishes, as a `gpumem run` supervisor (this test process) would, the companion's numbers for `pid` on the
 * GPU `uuid`: allocated/reserved and their peaks, OOMs, and 40 steps of 250 ms with 100 ms of data wait.
 */
export function publishCompanion(runtimeDir: string, pid: number, uuid: string, stats: { allocatedBytes: number; reservedBytes: number; numOoms: number }): void {
  const state = createCompanionState();
  applyCompanionMessage(state, { schemaVersion: 1, type: 'devices', pid, timeMs: 1, devices: [{ device: 0, uuid, name: null, totalBytes: null }] });
  applyCompanionMessage(state, {
    schemaVersion: 1, type: 'stats', pid, timeMs: 2, seq: 1, devices: [{
      device: 0, allocatedBytes: stats.allocatedBytes, reservedBytes: stats.reservedBytes, activeBytes: stats.allocatedBytes, inactiveSplitBytes: 0,
      requestedBytes: stats.allocatedBytes, peakAllocatedBytes: stats.allocatedBytes, peakReservedBytes: stats.reservedBytes, peakActiveBytes: stats.allocatedBytes,
      numAllocRetries: 0, numOoms: stats.numOoms,
    }],
  });
  applyCompanionMessage(state, {
    schemaVersion: 1, type: 'steps', pid, timeMs: 3, steps: 40, dataWaitMs: 4000, stepMs: 10_000, samples: 32 * 41,
    batchSeen: 32, batchMin: 32, batchMax: 32, batchAsked: null,
  });
  const doc = buildLiveCompanionDoc(state, { pid: process.pid, startTicks: readStartTicks(process.pid) }, Date.now(), (p) => readStartTicks(p));
  const error = writeLiveCompanion(liveCompanionPath({ XDG_RUNTIME_DIR: runtimeDir }, process.pid), doc);
  if (error !== null) throw new Error(error);
}

export interface ServeNode {
  port: number;
  stdout: () => string;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts `gpumem serve --port 0 …` with `env` and resolves once it printed its address. */
export function startServe(args: string[], env: Record<string, string>): Promise<ServeNode> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--source', 'nvml', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => { stderr += b.toString(); });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => {
      stdout += b.toString();
      const m = /^gpumem serve: https?:\/\/[^ ]+:(\d+)\//.exec(stdout);
      if (m) {
        resolve({
          port: Number(m[1]), stdout: () => stdout, stderr: () => stderr,
          stop: () => new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGINT');
          }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`gpumem serve exited ${code}: ${stderr}`)));
  });
}
