import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configArgs } from '../../bench/truth/methods.js';
import type { TruthCase } from '../../bench/truth/methods.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const data = JSON.parse(readFileSync(`${ROOT}bench/truth/measurements.json`, 'utf8')) as {
  cases: Array<TruthCase & { published: string; quote: string; source: string; cuda: string }>;
};

describe('bench/truth/measurements.json', () => {
  it('has unique ids and every field a case needs', () => {
    const ids = data.cases.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of data.cases) {
      expect(c.source, c.id).toMatch(/^https:\/\//);
      expect(['max_memory_allocated', 'max_memory_reserved', 'nvidia-smi'], c.id).toContain(c.metric);
      expect(c.batch, c.id).toBeGreaterThan(0);
      expect(c.gpu.length, c.id).toBeGreaterThan(0);
      if (c.model.config) expect(existsSync(`${ROOT}${c.model.config}`), c.id).toBe(true);
      else expect(c.model.params, c.id).toBeGreaterThan(0);
      if (c.trace) expect(existsSync(`${ROOT}${c.trace.script}`), c.id).toBe(true);
      else expect(c.traceUnavailable, c.id).toBeTruthy();
    }
  });

  it('converts every published number exactly and quotes it verbatim', () => {
    for (const c of data.cases) {
      const m = /^([\d.]+) (MB|GB)$/.exec(c.published);
      expect(m, c.id).not.toBeNull();
      expect(c.quote, c.id).toContain(c.published);
      // "MB" printed as used // 1024**2 is MiB; "GB" printed as x / 1e9 is 10^9 B.
      const expected = m![2] === 'MB' ? Number(m![1]) * 1024 ** 2 : Math.round(Number(m![1]) * 1e9);
      expect(c.valueBytes, c.id).toBe(expected);
    }
  });

  it('holds out the cases chosen by the hash of their id', () => {
    for (const c of data.cases) {
      const heldOut = createHash('sha256').update(c.id).digest()[0]! % 3 === 0;
      expect(c.heldOut, c.id).toBe(heldOut);
    }
    expect(data.cases.filter((c) => c.heldOut).length).toBeGreaterThanOrEqual(Math.floor(data.cases.length / 4));
  });

  it('passes each case setup to config mode', () => {
    const bert = data.cases.find((c) => c.id === 'hf-bert-large-b1x4-ckpt-fp16-adamw')!;
    expect(configArgs(bert)).toEqual(expect.arrayContaining(['--precision', 'amp-fp16', '--checkpointing', 'full', '--optimizer-impl', 'for-loop', '--attention', 'eager']));
    const fsdp = data.cases.find((c) => c.id === 'litgpt-llama2-7b-lora-fsdp2-b4')!;
    expect(configArgs(fsdp)).toEqual(expect.arrayContaining(['--sharding', 'fsdp', '--num-gpus', '2', '--lora-rank', '8', '--batch', '4']));
  });
});
