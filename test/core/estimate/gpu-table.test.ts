import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GPU_CATALOGUE, findGpu } from '../../../src/core/estimate/index.js';
import { GPU_TABLE } from '../../../src/core/estimate/gpu-table.js';

const MiB = 1024 * 1024;
const FIXTURE_PREFIX = 'fixture nvidia-smi/';

/** nvidia-smi's total and reserved MiB from a fixture, read straight from the text (XML fb_memory_usage or CSV columns). */
function fixtureMemory(file: string): { totalMiB: number | null; reservedMiB: number | null } {
  const text = readFileSync(new URL(`../../fixtures/nvidia-smi/${file}`, import.meta.url), 'utf8');
  if (file.endsWith('.xml')) {
    const fb = /<fb_memory_usage>([\s\S]*?)<\/fb_memory_usage>/.exec(text)?.[1] ?? '';
    const field = (name: string): number | null => {
      const m = new RegExp(`<${name}>(\\d+) MiB</${name}>`).exec(fb);
      return m ? Number(m[1]) : null;
    };
    return { totalMiB: field('total'), reservedMiB: field('reserved') };
  }
  const [header, row] = text.split('\n');
  const cols = header!.split(', ');
  const vals = row!.split(', ');
  const col = (name: string): number | null => {
    const i = cols.findIndex((c) => c.startsWith(`${name} `));
    return i < 0 ? null : Number.parseInt(vals[i]!, 10);
  };
  const total = col('memory.total');
  if (total !== null) return { totalMiB: total, reservedMiB: col('memory.reserved') };
  // The P100 capture has no memory.total column: reserved + used + free is the total less one MiB of rounding.
  const reserved = col('memory.reserved');
  return { totalMiB: reserved! + col('memory.used')! + col('memory.free')! + 1, reservedMiB: reserved };
}

describe('--gpu table', () => {
  it('holds at least 25 GPUs, each id once, including the ones people train on', () => {
    expect(GPU_TABLE.length).toBeGreaterThanOrEqual(25);
    expect(new Set(GPU_TABLE.map((r) => r.id.toLowerCase())).size).toBe(GPU_TABLE.length);
    for (const name of ['2080-ti', '3060', '3090', '4060', '4090', 'a4000', 'a5000', 'a6000', 'a10', 'a10g', 'l4', 'l40s', 't4', 'v100-16gb', 'v100-32gb', 'a100-40gb', 'a100-80gb', 'h100-80gb', 'h100-nvl', 'h200', 'b200']) {
      expect(findGpu(name), name).toBeDefined();
    }
  });

  it('every fixture-sourced row equals the total and reserved nvidia-smi printed in that fixture', () => {
    const fixtureRows = GPU_TABLE.filter((r) => r.source.startsWith(FIXTURE_PREFIX));
    expect(fixtureRows.length).toBeGreaterThanOrEqual(10);
    for (const r of fixtureRows) {
      const file = r.source.slice(FIXTURE_PREFIX.length).split(' ')[0]!;
      const got = fixtureMemory(file);
      expect(r.totalMiB, r.id).toBe(got.totalMiB);
      if (r.reservedMiB !== null || got.reservedMiB !== null) expect(r.reservedMiB, r.id).toBe(got.reservedMiB);
    }
  });

  it('a row without a printout says it is a marketing size; a measured row names its printout', () => {
    for (const r of GPU_TABLE) {
      if (r.measured) expect(r.source, r.id).toMatch(/^fixture nvidia-smi\/|#\d+/);
      else expect(r.source, r.id).toMatch(/^marketing size/);
    }
  });

  it('docs/estimate.md lists every row with its total', () => {
    const doc = readFileSync(new URL('../../../docs/estimate.md', import.meta.url), 'utf8');
    for (const r of GPU_TABLE) expect(doc, r.id).toContain(`| \`${r.id}\` | ${r.totalMiB} |`);
  });

  it('the catalogue in bytes is the table in MiB', () => {
    const h200 = GPU_CATALOGUE.find((g) => g.id === 'H200-141GB')!;
    expect(h200.totalBytes).toBe(143771 * MiB);
    expect(h200.reservedBytes).toBe(614 * MiB);
    expect(GPU_CATALOGUE.find((g) => g.id === 'V100-16GB')!.reservedBytes).toBeNull();
  });

  it('looks names up loosely but never confuses A10 with A100 or a prefix of a word', () => {
    expect(findGpu('A10')?.id).toBe('A10-24GB');
    expect(findGpu('a100')?.id).toBe('A100-80GB');
    expect(findGpu('A100 40GB')?.id).toBe('A100-40GB');
    expect(findGpu('rtx_4090')?.id).toBe('RTX-4090-24GB');
    expect(findGpu('4090')?.id).toBe('RTX-4090-24GB');
    expect(findGpu('h100')?.id).toBe('H100-80GB');
    expect(findGpu('H100-NVL')?.id).toBe('H100-NVL-94GB');
    expect(findGpu('H1')).toBeUndefined();
    expect(findGpu('')).toBeUndefined();
    expect(findGpu('24GiB')).toBeUndefined();
  });
});
