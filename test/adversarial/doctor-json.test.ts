/**
 * `doctor --json` on a machine without GPU access: a monitoring script must not get the bundled example's
 * findings (alice's torchrun, a notebook kernel) and status as if they were this machine's.
 */
import { describe, expect, it } from 'vitest';
import { expectNoHang, expectNoStackTrace, gpumem } from './harness.js';

describe('doctor --json without a GPU', () => {
  for (const args of [['doctor', '--json'], ['--json']]) {
    it(`gpumem ${args.join(' ')}: no example document; exit 3 with one line`, async () => {
      const r = await gpumem(args);
      expectNoHang(r, 'doctor --json');
      expectNoStackTrace(r, 'doctor --json');
      expect(r.stdout).not.toContain('alice');
      expect(r.stdout).toBe('');
      expect(r.code).toBe(3);
      expect(r.stderr.trim().split('\n')[0]).toMatch(/^gpumem: error: no GPU access/);
    });
  }

  it('the human screen still shows the example and says so first', async () => {
    const r = await gpumem(['doctor']);
    expect(r.stdout.split('\n')[0]).toMatch(/^No GPU access on this machine: showing the bundled example recording/);
  });
});
