/**
 * vLLM's start-up check of the KV cache: v0 `The model's max seq len (4096) is larger than the maximum number
 * of tokens that can be stored in KV cache (3664).`, v1 `To serve at least one request with the models's max
 * seq len (262144), (24.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.18
 * GiB). Based on the available memory, the estimated maximum model length is 34736.`, and `No available memory
 * for the cache blocks.` (weights and activations left nothing for the cache). vLLM rounds GiB to two
 * decimals, so those sizes are within ±0.005 GiB.
 */
import { SIZE_SOURCE } from '../size.js';
import type { OomKvCache } from '../types.js';
import { FieldCursor, headRecognizer, type HeadRead } from './base.js';
import { readSizeField } from './size-field.js';

const S = SIZE_SOURCE;
const HEAD =
  /The model's max seq len \((\d{1,9})\) is larger than the maximum number of tokens that can be stored in KV cache \((\d{1,12})\)|To serve at least one request with the models?'s max seq len \((\d{1,9})\)|No available memory for the cache blocks/gi;
const NEEDED = new RegExp(String.raw`\(${S} KV cache is needed`, 'gi');
const AVAILABLE = new RegExp(String.raw`available KV cache memory \(${S}\)`, 'gi');
const ESTIMATE = /estimated maximum model length is (\d{1,9})/gi;

function blankKv(): OomKvCache {
  return { maxModelLenTokens: null, cacheTokens: null, neededBytes: null, availableBytes: null, estimatedMaxModelLenTokens: null };
}

export const vllm = headRecognizer(HEAD, 'vllm-kv-cache', (m, fields, text, start, limit): HeadRead => {
  if (m[1] !== undefined) {
    fields.kvCache = { ...blankKv(), maxModelLenTokens: Number(m[1]), cacheTokens: Number(m[2]) };
    fields.era = { version: 'v0 engine', evidence: '"stored in KV cache (N)" wording' };
    return { count: 2 };
  }
  if (m[3] === undefined) return { count: 0 };
  const kv = { ...blankKv(), maxModelLenTokens: Number(m[3]) };
  fields.kvCache = kv;
  fields.era = { version: 'v1 engine', evidence: '"To serve at least one request" wording' };
  const cur = new FieldCursor(text, start, limit, m.index + m[0].length);
  const needed = cur.take(NEEDED);
  const available = cur.take(AVAILABLE);
  const estimate = cur.take(ESTIMATE);
  kv.neededBytes = readSizeField(fields, 'kvCache.neededBytes', needed?.[1], needed?.[2]).bytes;
  kv.availableBytes = readSizeField(fields, 'kvCache.availableBytes', available?.[1], available?.[2]).bytes;
  kv.estimatedMaxModelLenTokens = estimate ? Number(estimate[1]) : null;
  fields.requestedBytes = kv.neededBytes;
  const whole = Boolean(needed && available);
  fields.partial = !whole;
  const closed = estimate !== null || /initializing the engine/i.test(text.slice(cur.end, limit));
  return { count: cur.count + 1, end: cur.end, wants: closed ? 'none' : 'any' };
});
