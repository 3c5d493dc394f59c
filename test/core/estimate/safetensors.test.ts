import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GpumemError } from '../../../src/core/errors.js';
import { parseSafetensors, parseShardIndex, readHeaderLength, summarizeTensors, topLevelModule } from '../../../src/core/estimate/index.js';
import { encodeSafetensors } from './helpers.js';
import { runs } from '../../helpers/fuzz.js';

describe('safetensors header', () => {
  it('counts parameters per dtype and top-level module exactly', () => {
    const bytes = encodeSafetensors(
      [
        { name: 'model.embed_tokens.weight', dtype: 'BF16', shape: [100, 16] },
        { name: 'model.layers.0.mlp.up_proj.weight', dtype: 'BF16', shape: [32, 16] },
        { name: 'model.layers.1.mlp.up_proj.weight', dtype: 'F32', shape: [32, 16] },
        { name: 'lm_head.weight', dtype: 'F16', shape: [100, 16] },
        { name: 'scale', dtype: 'F32', shape: [] },
      ],
      true,
      { format: 'pt' },
    );
    const header = parseSafetensors(bytes);
    expect(header.metadata).toEqual({ format: 'pt' });
    const s = summarizeTensors(header.tensors);
    expect(s.totalParams).toBe(1600 + 512 + 512 + 1600 + 1);
    expect(s.paramsByDtype).toEqual({ BF16: 2112, F32: 513, F16: 1600 });
    expect(s.paramsByModule).toEqual({ 'model.embed_tokens': 1600, 'model.layers': 1024, lm_head: 1600, scale: 1 });
    expect(s.totalBytes).toBe(2112 * 2 + 513 * 4 + 1600 * 2);
  });

  it('rejects a header whose offsets disagree with dtype × shape, naming the tensor', () => {
    const json = JSON.stringify({ w: { dtype: 'F32', shape: [2, 2], data_offsets: [0, 8] } });
    const bytes = new Uint8Array(8 + json.length);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
    bytes.set(new TextEncoder().encode(json), 8);
    expect(() => parseSafetensors(bytes, 'm.safetensors')).toThrow(/m\.safetensors: tensor "w": data_offsets/);
  });

  it('refuses header lengths beyond the 100 MB limit or the file size', () => {
    const first8 = new Uint8Array(8);
    new DataView(first8.buffer).setBigUint64(0, 2n ** 40n, true);
    expect(() => readHeaderLength(first8, 'x')).toThrow(/limit/);
    new DataView(first8.buffer).setBigUint64(0, 500n, true);
    expect(() => readHeaderLength(first8, 'x', 100)).toThrow(/past the end/);
    expect(readHeaderLength(first8, 'x', 508)).toBe(500);
  });

  it('never throws anything but a GpumemError on arbitrary bytes (fuzz)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          parseSafetensors(bytes);
        } catch (e) {
          expect(e).toBeInstanceOf(GpumemError);
        }
      }),
      { numRuns: runs(400) },
    );
  });

  it('never throws anything but a GpumemError on arbitrary JSON headers (fuzz)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const json = new TextEncoder().encode(JSON.stringify(value) ?? 'null');
        const bytes = new Uint8Array(8 + json.length);
        new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
        bytes.set(json, 8);
        try {
          const h = parseSafetensors(bytes);
          for (const t of h.tensors) expect(Number.isSafeInteger(t.elements)).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(GpumemError);
        }
      }),
      { numRuns: runs(400) },
    );
  });

  it('round-trips any valid tensor list (property)', () => {
    const tensor = fc.record({
      name: fc.stringMatching(/^[a-z]{1,6}(\.[a-z0-9]{1,4}){0,3}$/),
      dtype: fc.constantFrom('F32', 'BF16', 'F16', 'I8', 'F8_E4M3', 'I64'),
      shape: fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(tensor, { selector: (t) => t.name, maxLength: 8 }), (tensors) => {
        const s = summarizeTensors(parseSafetensors(encodeSafetensors(tensors)).tensors);
        expect(s.totalParams).toBe(tensors.reduce((a, t) => a + t.shape.reduce((x, d) => x * d, 1), 0));
      }),
    );
  });
});

describe('sharded index and module names', () => {
  it('groups tensors by shard and refuses paths that leave the folder', () => {
    const idx = parseShardIndex(JSON.stringify({ metadata: { total_size: 10 }, weight_map: { a: 's1', b: 's2', c: 's1' } }), 'i');
    expect([...idx.shards.entries()]).toEqual([['s1', ['a', 'c']], ['s2', ['b']]]);
    expect(idx.totalSizeBytes).toBe(10);
    expect(() => parseShardIndex(JSON.stringify({ weight_map: { a: '../etc/passwd' } }), 'i')).toThrow(/not a file in the same folder/);
    expect(() => parseShardIndex('{', 'i')).toThrow(/not valid JSON/);
  });
  it('collapses wrappers and layer numbers', () => {
    expect(topLevelModule('model.layers.3.mlp.up_proj.weight')).toBe('model.layers');
    expect(topLevelModule('backbone.layer1.0.conv1.weight')).toBe('backbone.layer1');
    expect(topLevelModule('classifier.4.weight')).toBe('classifier');
    expect(topLevelModule('lm_head.weight')).toBe('lm_head');
  });
});
