/**
 * Output that is not a terminal (a pipe, a file, CI logs): kill and diagnose cut long command lines to the
 * width, and used to cut their end, which left only the interpreter's path (`/home/bob/.conda/envs/nlp/b…`)
 * or nothing at all. The command must keep what it runs: the script or module and the tail of its arguments.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectNoHang, expectNoStackTrace, gpumem } from './harness.js';

/** Long command lines on GPU 1: bob's notebook kernel (38877) and alice's rank (41211). */
const SYNTHETIC = fileURLToPath(new URL('../fixtures/recordings/synthetic-two-h100.ndjson', import.meta.url));

const rowOf = (stdout: string, pid: number): string => stdout.split('\n').find((l) => new RegExp(`^\\s*${pid}\\s`).test(l)) ?? '';

describe('long commands off a terminal', () => {
  it('kill --dry-run keeps the script and the end of its arguments', async () => {
    const r = await gpumem(['kill', '--replay', SYNTHETIC, '--gpu', '1', '--dry-run']);
    expectNoHang(r, 'kill --dry-run');
    expectNoStackTrace(r, 'kill --dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(rowOf(r.stdout, 38877)).toMatch(/ …\/python -m i\S*…\S*json$/);
    expect(rowOf(r.stdout, 41211)).toMatch(/ …\/python -u t\S*…\S*\.yaml$/);
  });

  it('diagnose keeps the notebook kernel\'s connection file and the trainer\'s config, within 100 columns', async () => {
    const r = await gpumem(['diagnose', '--replay', SYNTHETIC]);
    expectNoStackTrace(r, 'diagnose');
    expect(rowOf(r.stdout, 38877)).toMatch(/kernel +…\/python -m ipy.*….*5c1f7a\.json$/);
    expect(rowOf(r.stdout, 41211)).toMatch(/rank +…\/python -u tra.*….*vit_l16\.yaml$/);
    const tree = r.stdout.split('\n').find((l) => l.includes('pid 38877 ('))!;
    expect(tree).toMatch(/^ {4}pid 38877 \(…\/python -m ipykernel_l.*kernel-5c1f7a\.json\), bob: 9\.50 GiB here, 1 process$/);
    // Every line that shows a process's command fits (a tree whose root command is unknown says so whole).
    for (const line of r.stdout.split('\n').filter((l) => /^ {4}(\d|pid|launcher)/.test(l) && l.includes('/'))) expect(line.length, line).toBeLessThanOrEqual(100);
  });
});
