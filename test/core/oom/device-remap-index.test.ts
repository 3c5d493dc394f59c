/** The device-remap cause names a GPU that CUDA_VISIBLE_DEVICES gives by UUID with its nvidia-smi index. */
import { describe, expect, it } from 'vitest';
import { explainOom, parseOomText, type Cause, type OomContext } from '../../../src/core/oom/index.js';

const OOM = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 8.00 GiB of which 0 bytes is free. Of the allocated memory 6.00 GiB is allocated by PyTorch, and 10.00 MiB is reserved by PyTorch but unallocated.';
const UUID1 = 'GPU-6f0e1b2c-0000-4000-8000-000000000001';
const GPUS = [{ index: 0, uuid: 'GPU-aaaa0000-0000-4000-8000-000000000000' }, { index: 1, uuid: UUID1 }];

function remap(ctx: OomContext): Cause {
  const found = explainOom(parseOomText(OOM)[0]!, ctx).find((c) => c.id === 'device-remap');
  expect(found).toBeDefined();
  return found!;
}

describe('device-remap with a UUID entry', () => {
  it('names the index, keeps the UUID beside it, and the fix says which GPU to look at', () => {
    const c = remap({ cudaVisibleDevices: UUID1, gpus: GPUS });
    expect(c.title).toBe(`"GPU 0" in the message is physical GPU 1 (${UUID1})`);
    expect(c.fix).toMatch(/^Look at GPU 1 in `gpumem status`/);
    expect(c.evidence).toMatchObject({ physicalGpu: UUID1, physicalGpuIndex: 1 });
  });

  it('a unique UUID prefix, as CUDA accepts it, is matched too', () => {
    expect(remap({ cudaVisibleDevices: 'GPU-6f0e1b2c', gpus: GPUS }).title).toBe('"GPU 0" in the message is physical GPU 1 (GPU-6f0e1b2c)');
  });

  it('without the machine\'s GPUs (explain on a log) the UUID is all there is', () => {
    expect(remap({ cudaVisibleDevices: UUID1 }).title).toBe(`"GPU 0" in the message is physical GPU ${UUID1}`);
    expect(remap({ cudaVisibleDevices: '4,5' }).evidence).toMatchObject({ physicalGpu: '4', physicalGpuIndex: 4 });
  });
});
