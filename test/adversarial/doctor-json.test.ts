/**
 * `doctor --json` on a machine without GPU access: a monitoring script must not get the bundled example's
 * findings (another machine's trainer 2122 and its workers) and status as if they were this machine's.
 */
import { describe, expect, it } from 'vitest';
import { expectNoHang, expectNoStackTrace, gpumem } from './harness.js';

describe('doctor --json without a GPU', () => {
  for (const args of [['doctor', '--json'], ['--json']]) {
    it(`gpumem ${args.join(' ')}: no example document; exit 3 with one line`, async () => {
      const r = await gpumem(args);
      expectNoHang(r, 'doctor --json');
      expectNoStackTrace(r, 'doctor --json');
      expect(r.stdout).not.toContain('2122');
      expect(r.stdout).toBe('');
      expect(r.code).toBe(3);
      expect(r.stderr.trim().split('\n')[0]).toMatch(/^gpumem: error: no GPU access/);
    });
  }

  it('the human screen still shows the example and says so first', async () => {
    const r = await gpumem(['doctor']);
    expect(r.stdout.split('\n')[0]).toMatch(/^No GPU access on this machine: showing the bundled example recording \(examples\/doctor-example\.ndjson, recorded on an NVIDIA H100 80GB HBM3 on 2026-11-27\)/);
    expect(r.stdout).toMatch(/^WARNING +2 workers of pid 2122 /m);
  });
});
