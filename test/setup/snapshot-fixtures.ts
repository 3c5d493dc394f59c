/**
 * Setup step: writes the snapshot fixtures (every schema generation and protocol, the hostile set and the
 * expected numbers) with test/fixtures/snapshot/gen.py into build/snapshot, when the generator changed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SNAPSHOT_FIXTURES = `${ROOT}build/snapshot`;
const GEN = `${ROOT}test/fixtures/snapshot/gen.py`;

export async function buildSnapshotFixtures(): Promise<void> {
  const stamp = `${SNAPSHOT_FIXTURES}/.stamp`;
  const hash = createHash('sha256').update(readFileSync(GEN)).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return;
  rmSync(SNAPSHOT_FIXTURES, { recursive: true, force: true });
  execFileSync('python3', [GEN, 'fixtures', SNAPSHOT_FIXTURES], { stdio: 'inherit' });
  writeFileSync(stamp, hash);
}
