import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { GpumemError } from '../../src/core/index.js';
import { openSource } from '../../src/sources/index.js';

const FAKE_SMI = fileURLToPath(new URL('../fake-smi/nvidia-smi', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../fixtures/nvidia-smi/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gpumem-open-'));
const NEVER_A_PID = 4194305; // above PID_MAX_LIMIT: no process can have it
const child = spawn('/bin/sleep', ['30'], { stdio: 'ignore', env: { CUDA_VISIBLE_DEVICES: '0' } });
afterAll(() => child.kill('SIGKILL'));

// The T4 fixture with its two pids pointed at a real child and at a pid that cannot exist here.
const xml = join(dir, 't4-live.xml');
writeFileSync(xml, readFileSync(join(FIXTURES, 'tesla-t4-procs-driver-515.105.01.xml'), 'utf8').replace('<pid>675</pid>', `<pid>${child.pid}</pid>`).replace('<pid>5762</pid>', `<pid>${NEVER_A_PID}</pid>`));
const env = { ...process.env, GPUMEM_FAKE_SMI_XML: xml };

async function error(p: Promise<unknown>): Promise<GpumemError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GpumemError) return e;
    throw e;
  }
  throw new Error('expected a GpumemError');
}

describe('openSource', () => {
  it('smi: live samples carry host facts; host pids not seen here keep their row, marked', async () => {
    const source = await openSource({ source: 'smi', smiPath: FAKE_SMI, env });
    const s = await source.readSample();
    source.close();
    expect(s.source.kind).toBe('smi');
    const [mine, foreign] = s.processes;
    expect(mine!.pid).toBe(child.pid);
    expect(mine!.host).toMatchObject({ visible: true, ppid: process.pid, cmdline: ['/bin/sleep', '30'], cudaEnv: { CUDA_VISIBLE_DEVICES: '0' } });
    expect(mine!.usedBytes).toBe(22 * 1024 * 1024);
    expect(foreign!.pid).toBe(NEVER_A_PID);
    expect(foreign!.host?.visible).toBe(false);
    expect(foreign!.usedBytes).toBe(1005 * 1024 * 1024);
  });

  it('auto: falls back to nvidia-smi when NVML cannot load', async () => {
    const source = await openSource({ source: 'auto', nvmlLib: join(dir, 'no-libnvidia-ml.so.1'), smiPath: FAKE_SMI, env });
    expect(source.kind).toBe('smi');
    source.close();
  });

  it('auto: nothing works → NO_GPU_ACCESS naming what was tried', async () => {
    const e = await error(openSource({ source: 'auto', nvmlLib: join(dir, 'no-libnvidia-ml.so.1'), smiPath: join(dir, 'no-nvidia-smi'), env }));
    expect(e.code).toBe('NO_GPU_ACCESS');
    expect(e.message).toContain(join(dir, 'no-libnvidia-ml.so.1'));
    expect(e.message).toContain(`${join(dir, 'no-nvidia-smi')} not found`);
    expect(e.hint).toMatch(/--replay FILE/);
  });

  it('smi: a failing nvidia-smi is quoted in the error', async () => {
    const msg = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.";
    const e = await error(openSource({ source: 'smi', smiPath: FAKE_SMI, env: { ...env, GPUMEM_FAKE_SMI_FAIL: msg } }));
    expect(e.code).toBe('SMI_ERROR');
    expect(e.message).toContain(msg);
    expect(e.message).toContain('exited with 9');
  });

  it('smi: PATH lookup finds nvidia-smi by name', async () => {
    const source = await openSource({ source: 'smi', env: { ...env, PATH: `${join(FAKE_SMI, '..')}:${process.env.PATH}` } });
    expect((await source.readSample()).source.detail).toBe('nvidia-smi -q -x');
    source.close();
  });
});
