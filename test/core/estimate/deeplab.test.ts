import { describe, expect, it } from 'vitest';
import { parseSafetensors, summarizeTensors } from '../../../src/core/estimate/index.js';
import { deeplabV3Resnet50 } from './deeplab.js';
import { encodeSafetensors } from './helpers.js';

describe('deeplabv3_resnet50 shapes', () => {
  it('count torchvision\'s published 42,004,074 parameters (buffers excluded)', () => {
    const header = parseSafetensors(encodeSafetensors(deeplabV3Resnet50()));
    const params = header.tensors.filter((t) => !/running_|num_batches/.test(t.name));
    expect(summarizeTensors(params).totalParams).toBe(42_004_074);
    // The auxiliary FCN head: 3×3 conv 1024→256 (no bias), BN 256 (weight, bias), 1×1 conv 256→21 with bias.
    const noAux = deeplabV3Resnet50(21, false).filter((t) => !/running_|num_batches/.test(t.name));
    const aux = 1024 * 256 * 9 + 2 * 256 + (256 * 21 + 21);
    expect(summarizeTensors(parseSafetensors(encodeSafetensors(noAux)).tensors).totalParams).toBe(42_004_074 - aux);
  });
});
