import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectPidNamespace } from '../../../src/orchestrate/index.js';
import { detectContainer } from '../../../src/sources/procfs/index.js';

const root = mkdtempSync(join(tmpdir(), 'gpumem-container-'));

/** A /proc with only 1/cgroup (or nothing), and a path for /.dockerenv that exists or not. */
function fakeHost(name: string, cgroup: string | null, dockerenv: boolean): { procRoot: string; dockerenvPath: string } {
  const procRoot = join(root, name, 'proc');
  mkdirSync(join(procRoot, '1'), { recursive: true });
  if (cgroup !== null) writeFileSync(join(procRoot, '1', 'cgroup'), cgroup);
  const dockerenvPath = join(root, name, '.dockerenv');
  if (dockerenv) writeFileSync(dockerenvPath, '');
  return { procRoot, dockerenvPath };
}

describe('container probe', () => {
  it('reads a runtime in a cgroup v1 path, /.dockerenv under cgroup v2, a plain host, and nothing readable', () => {
    expect(detectContainer(fakeHost('v1', '12:pids:/docker/0123abcd\n', false))).toBe(true);
    expect(detectContainer(fakeHost('k8s', '0::/kubepods/besteffort/pod1/abc\n', false))).toBe(true);
    expect(detectContainer(fakeHost('v2-docker', '0::/\n', true))).toBe(true);
    expect(detectContainer(fakeHost('host', '0::/init.scope\n', false))).toBe(false);
    expect(detectContainer(fakeHost('none', null, false))).toBeNull();
    expect(detectContainer(fakeHost('dockerenv-only', null, true))).toBe(true);
  });

  it('the diagnosis verdict follows the probe', () => {
    expect(detectPidNamespace(fakeHost('ns-v1', '1:name=systemd:/docker/ff\n', false).procRoot)).toBe('container');
    expect(detectPidNamespace(fakeHost('ns-none', null, false).procRoot)).toBe(detectContainer({ procRoot: join(root, 'ns-none', 'proc') }) ? 'container' : 'unknown');
  });
});
