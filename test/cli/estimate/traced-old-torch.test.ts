/**
 * `gpumem estimate` under an older torch 2.x (.venv-torch2old/, python/requirements-test-old.txt) against the
 * current one (.venv/): the same script must trace to the same bytes, category by category and module by
 * module, so the tracer does not depend on internals of one release. Without either environment these tests
 * fail and say how to install it.
 */
import { describe, expect, it } from 'vitest';
import { requireOldTorchPython, requireTestPython } from '../../setup/python-venv.js';
import { traced, TIMEOUT_MS, type Traced } from './traced-helpers.js';

type Versioned = Traced & { torchVersion: string };

/** Traces the same run once per environment; `args` places the interpreter with `py`. */
async function underBoth(args: (py: string) => string[]): Promise<{ older: Versioned; current: Versioned }> {
  const [older, current] = await Promise.all([traced(args(requireOldTorchPython())), traced(args(requireTestPython()))]);
  return { older: older as Versioned, current: current as Versioned };
}

function expectSameBytes({ older, current }: { older: Versioned; current: Versioned }): void {
  expect(older.torchVersion).toMatch(/^2\.4\./); // the pin of requirements-test-old.txt really ran
  expect(current.torchVersion).not.toBe(older.torchVersion);
  expect(older.byCategory).toEqual(current.byCategory);
  expect(older.peakRequestedBytes).toBe(current.peakRequestedBytes);
  expect(older.peakPhase).toBe(current.peakPhase);
  expect(older.byModule).toEqual(current.byModule);
  expect(older.peakAllocatedBytes).toBe(current.peakAllocatedBytes);
  expect(older.peakReservedBytes).toBe(current.peakReservedBytes);
  expect(older.segmentCount).toBe(current.segmentCount);
}

describe('gpumem estimate under an older torch 2.x traces the same bytes as under the current one', () => {
  it('torchvision ResNet-18 with SGD momentum', async () => {
    const both = await underBoth((py) => ['--', py, 'train_resnet.py']);
    expectSameBytes(both);
    expect(both.older.byCategory['optimizer-state']).toBe(11_181_642 * 4); // resnet18(num_classes=10), fp32
  }, TIMEOUT_MS);

  it('an MLP step function given by --entry, with Adam', async () => {
    const both = await underBoth((py) => ['--python', py, '--entry', 'make_step:make_step', '--gpu', 'H100-80GB']);
    expectSameBytes(both);
    const params = 512 * 2048 * 2 + 2048 + 512;
    expect(both.older.byCategory['optimizer-state']).toBe(2 * params * 4);
  }, TIMEOUT_MS);
});
