/**
 * A real Prometheus (Debian's package) for tests: started on a free loopback port with a generated config,
 * queried over its HTTP API, stopped and its folder removed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROMETHEUS = '/usr/bin/prometheus';
export const PROMTOOL = '/usr/bin/promtool';

/** Polls `probe` every 250 ms until it gives a value; past `timeoutMs` fails with Prometheus's log tail. */
export async function pollUntil<T>(what: string, probe: () => Promise<T | undefined>, log: () => string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; prometheus log:\n${log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface VectorResult {
  metric: Record<string, string>;
  value: [number, string];
}

export interface ScrapeJob {
  name: string;
  targets: string[];
  /** Extra YAML lines of the scrape config, indented for it (scheme, authorization, tls_config…). */
  extra?: string[];
}

export interface Prometheus {
  base: string;
  /** An instant query's vector; throws when Prometheus answers an error. */
  query(expr: string): Promise<VectorResult[]>;
  /** Polls `probe` every 250 ms until it gives a value; the error carries the end of Prometheus's log. */
  until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  log(): string;
  /** Stops Prometheus, waits for it to exit, removes its folder. */
  stop(): Promise<void>;
}

/** Starts Prometheus scraping `jobs` every `intervalMs`, evaluating `ruleFiles` at the same pace. */
export async function startPrometheus(jobs: ScrapeJob[], options: { intervalMs?: number; ruleFiles?: string[] } = {}): Promise<Prometheus> {
  if (!existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is missing: apt-get install -y prometheus`);
  const dir = mkdtempSync(join(tmpdir(), 'gpumem-prom-'));
  const interval = `${options.intervalMs ?? 250}ms`;
  const config = join(dir, 'prometheus.yml');
  const ruleFiles = (options.ruleFiles ?? []).map((file, i) => {
    // Copied in, so the config names files in its own folder whatever the working directory.
    const copy = join(dir, `rules-${i}.yml`);
    writeFileSync(copy, readFileSync(file));
    return copy;
  });
  writeFileSync(config, [
    'global:', `  scrape_interval: ${interval}`, `  scrape_timeout: ${interval}`, `  evaluation_interval: ${interval}`,
    ...(ruleFiles.length > 0 ? ['rule_files:', ...ruleFiles.map((f) => `  - ${f}`)] : []),
    'scrape_configs:',
    ...jobs.flatMap((j) => [`  - job_name: ${j.name}`, ...(j.extra ?? []), '    static_configs:', `      - targets: [${j.targets.map((t) => `'${t}'`).join(', ')}]`]),
    '',
  ].join('\n'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let log = '';
  const child: ChildProcess = spawn(PROMETHEUS, [
    `--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (b: Buffer) => { log += b.toString(); });
  child.stderr?.on('data', (b: Buffer) => { log += b.toString(); });
  const query = async (expr: string): Promise<VectorResult[]> => {
    const res = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const doc = (await res.json()) as { status: string; error?: string; data: { result: VectorResult[] } };
    if (doc.status !== 'success') throw new Error(`${expr}: ${doc.error}`);
    return doc.data.result;
  };
  const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> => pollUntil(what, probe, () => log, timeoutMs);
  return {
    base, query, until, log: () => log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
