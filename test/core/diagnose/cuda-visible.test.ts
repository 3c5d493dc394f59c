import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allowedGpuIndexes, isKernelCommand, launcherName, parseCudaVisibleDevices } from '../../../src/core/diagnose/index.js';
import { device } from './build.js';

describe('CUDA_VISIBLE_DEVICES', () => {
  it('reads indexes and UUID prefixes, stopping at the first entry CUDA would reject', () => {
    expect(parseCudaVisibleDevices('2, 0')).toEqual([{ kind: 'index', index: 2 }, { kind: 'index', index: 0 }]);
    expect(parseCudaVisibleDevices('1,foo,0')).toEqual([{ kind: 'index', index: 1 }]);
    expect(parseCudaVisibleDevices('')).toEqual([]);
    expect(parseCudaVisibleDevices('GPU-0000000')).toEqual([{ kind: 'uuid', prefix: 'GPU-0000000' }]);
  });

  it('maps to nvidia-smi indexes unless the order is ambiguous', () => {
    const same = [device(0, 0), device(1, 0)];
    const mixed = [device(0, 0), device(1, 0, { name: 'NVIDIA A10' })];
    expect(allowedGpuIndexes('1', undefined, same)).toEqual([1]);
    expect(allowedGpuIndexes('1', undefined, mixed)).toBeNull();
    expect(allowedGpuIndexes('1', 'PCI_BUS_ID', mixed)).toEqual([1]);
    expect(allowedGpuIndexes(same[1]!.uuid!, undefined, mixed)).toEqual([1]);
  });

  it('property: any text parses without throwing into entries taken from its own items, in order', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.array(fc.oneof(fc.nat(16).map(String), fc.constantFrom('GPU-1a2b', 'MIG-3c', 'x', ' 3 ', '')), { maxLength: 8 }).map((a) => a.join(','))), (text) => {
        const entries = parseCudaVisibleDevices(text);
        const items = text.split(',').map((s) => s.trim());
        expect(entries.length).toBeLessThanOrEqual(items.length);
        entries.forEach((e, i) => {
          if (e.kind === 'index') expect(/^\d+$/.test(items[i]!) && Number(items[i]) === e.index).toBe(true);
          else expect(e.prefix).toBe(items[i]);
        });
      }),
    );
  });

  it('property: command classifiers never throw on arbitrary argv', () => {
    fc.assert(
      fc.property(fc.option(fc.array(fc.string(), { maxLength: 6 }), { nil: null }), (argv) => {
        expect(typeof isKernelCommand(argv)).toBe('boolean');
        const l = launcherName(argv);
        expect(l === null || ['torchrun', 'accelerate', 'deepspeed'].includes(l)).toBe(true);
      }),
    );
  });

  it('recognises kernels and launchers from their command lines', () => {
    expect(isKernelCommand(['/usr/bin/python3', '-m', 'ipykernel_launcher', '-f', 'k.json'])).toBe(true);
    expect(isKernelCommand(['ipython'])).toBe(true);
    expect(isKernelCommand(['python', 'train.py', '--name', 'ipython'])).toBe(false);
    expect(launcherName(['/opt/conda/bin/python', '/opt/conda/bin/torchrun', '--nproc-per-node=8', 'train.py'])).toBe('torchrun');
    expect(launcherName(['python', '-m', 'torch.distributed.run', 'train.py'])).toBe('torchrun');
    expect(launcherName(['accelerate', 'launch', 'train.py'])).toBe('accelerate');
    expect(launcherName(['python', 'train.py'])).toBeNull();
  });
});
