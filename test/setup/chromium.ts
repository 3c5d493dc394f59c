/**
 * The browser test needs Debian's Chromium. On a fresh machine the setup installs it with apt-get when it
 * runs as root; otherwise it cannot, and returns the reason, which the suite prints loudly and the browser
 * test shows as its skip reason (reported as skipped, never as passed).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';
export const FIREFOX = '/usr/bin/firefox-esr';

function run(argv: string[]): { ok: boolean; output: string } {
  const r = spawnSync(argv[0] as string, argv.slice(1), {
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: 15 * 60_000,
  });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/**
 * Makes sure a program from a Debian package is there, installing the package with apt-get when running as
 * root; returns null when it is, else why it is not.
 */
export function ensureDebianProgram(path: string, pkg: string): string | null {
  if (existsSync(path)) return null;
  if (process.getuid?.() !== 0) return `${path} is missing and the tests do not run as root, so they cannot install it (run: sudo apt-get install -y ${pkg})`;
  if (!existsSync('/usr/bin/apt-get')) return `${path} is missing and there is no apt-get to install it with`;
  process.stderr.write(`test setup: installing ${pkg} with apt-get (${path} is missing)…\n`);
  const update = run(['apt-get', 'update', '-qq']);
  const install = update.ok ? run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', pkg]) : update;
  if (!install.ok || !existsSync(path)) return `installing ${pkg} with apt-get failed: ${install.output.trim().split('\n').slice(-3).join(' / ')}`;
  return null;
}

/** Makes sure Chromium is there; returns null when it is, else why it is not. */
export function ensureChromium(): string | null {
  return ensureDebianProgram(CHROMIUM, 'chromium');
}

/**
 * The page's Firefox test drives Debian's firefox-esr over WebDriver BiDi. Without it that test fails (never
 * skips), saying what to install.
 */
export function ensureFirefox(): string | null {
  return ensureDebianProgram(FIREFOX, 'firefox-esr');
}

/**
 * The /metrics tests validate the exposition with promtool and scrape it with a real Prometheus, both from
 * Debian's prometheus package. Without them those tests fail (never skip), saying what to install.
 */
export function ensurePrometheus(): string | null {
  return ensureDebianProgram('/usr/bin/promtool', 'prometheus');
}

/** A banner that cannot be missed in the test output. */
export function skipBanner(reason: string): string {
  const line = '!'.repeat(78);
  return `\n${line}\n!! browser test SKIPPED (not passed): ${reason}\n${line}\n`;
}
