/**
 * `gpumem serve` as a real process for the adversarial suite: started from the built CLI on a free port,
 * with its printed address, its log, its highest resident memory, and raw HTTP requests that can name any
 * Host header (fetch cannot).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN } from './harness.js';

export const RECORDING = fileURLToPath(new URL('../../examples/doctor-example.ndjson', import.meta.url));

export interface Served {
  child: ChildProcess;
  port: number;
  stdout: () => string;
  stderr: () => string;
  /** Highest VmRSS seen since start (sampled every 20 ms), in bytes. */
  peakRssBytes: () => number;
  rssBytes: () => number;
  stop: () => Promise<number | null>;
}

/** Starts `gpumem serve --port 0 ARGS…` and resolves once it printed its address and token lines. */
export function serve(args: readonly string[], env: Record<string, string> = {}): Promise<Served> {
  // Its own history and runtime folders, so no case reads another's runs.
  const home = mkdtempSync(join(tmpdir(), 'gpumem-adv-serve-'));
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, GPUMEM_NVML_LIB: '/nonexistent/libnvidia-ml.so.1', XDG_DATA_HOME: home, XDG_RUNTIME_DIR: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let peak = 0;
  const rssBytes = (): number => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      return 0;
    }
  };
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes())), 20);
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      // The address, then the token or read-only line.
      const m = /^gpumem serve: http:\/\/\S+:(\d+)\/ .*\n.*\n/.exec(stdout);
      if (m) {
        resolve({
          child, port: Number(m[1]), stdout: () => stdout, stderr: () => stderr, peakRssBytes: () => peak, rssBytes,
          stop: () => new Promise((done) => {
            clearInterval(sampler);
            const finish = (code: number | null): void => {
              rmSync(home, { recursive: true, force: true });
              done(code);
            };
            // 'close', not 'exit': the log is complete only once its pipes closed.
            if (child.exitCode !== null && child.stderr!.closed) return finish(child.exitCode);
            child.once('close', finish);
            child.kill('SIGINT');
          }),
        });
      }
    });
    child.once('exit', (code) => {
      clearInterval(sampler);
      reject(new Error(`gpumem serve exited ${code}: ${stderr}`));
    });
  });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request to `address:port` with exactly these headers (Host included); never rejects on a status. */
export function ask(address: string, port: number, path: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: address, port, path, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
