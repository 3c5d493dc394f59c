/**
 * The allocator configuration the child's PyTorch reads: both PYTORCH_ALLOC_CONF (read first by newer
 * releases) and PYTORCH_CUDA_ALLOC_CONF get one consistent value, a non-native backend never gets
 * expandable_segments, and what was set is printed. Real gpumem and a real child printing its environment.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectClean, gpumem, world, type World } from './supervise-helpers.js';

let w: World | null = null;
afterEach(() => {
  w?.remove();
  w = null;
});

const PRINT_ENV = [process.execPath, '-e', 'console.log("seen " + JSON.stringify({ a: process.env.PYTORCH_ALLOC_CONF ?? null, c: process.env.PYTORCH_CUDA_ALLOC_CONF ?? null }))'];

async function childSees(env: Record<string, string>): Promise<{ seen: { a: string | null; c: string | null }; stderr: string }> {
  w = world();
  const r = await gpumem(['run', '--no-history', '--no-companion', '--', ...PRINT_ENV], { ...w.env, ...env }, 10000);
  expectClean(r, 'gpumem run');
  expect(r.code).toBe(0);
  const line = r.stdout.split('\n').find((l) => l.startsWith('seen ')) as string;
  return { seen: JSON.parse(line.slice(5)) as { a: string | null; c: string | null }, stderr: r.stderr };
}

describe('supervise: allocator configuration of the child', () => {
  it('backend:cudaMallocAsync gets no expandable_segments, in either variable', async () => {
    const { seen, stderr } = await childSees({ PYTORCH_CUDA_ALLOC_CONF: 'backend:cudaMallocAsync' });
    expect(seen).toEqual({ a: 'backend:cudaMallocAsync', c: 'backend:cudaMallocAsync' });
    expect(stderr).toContain('gpumem: env PYTORCH_ALLOC_CONF=backend:cudaMallocAsync');
    expect(stderr).toMatch(/PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync {2}\[kept: .*not the native allocator/);
  });

  it('nothing set: both variables get expandable_segments:True, and both are printed', async () => {
    const { seen, stderr } = await childSees({});
    expect(seen).toEqual({ a: 'expandable_segments:True', c: 'expandable_segments:True' });
    expect(stderr).toMatch(/env PYTORCH_ALLOC_CONF=expandable_segments:True {2}\[set: read first by PyTorch ≥ 2\.9/);
    expect(stderr).toMatch(/env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True {2}\[set: /);
  });

  it('only the new variable set: its options are kept and copied, merged, into the old one', async () => {
    const { seen } = await childSees({ PYTORCH_ALLOC_CONF: 'max_split_size_mb:128' });
    expect(seen).toEqual({ a: 'max_split_size_mb:128,expandable_segments:True', c: 'max_split_size_mb:128,expandable_segments:True' });
  });

  it('both set to different values: each is merged on its own, nothing of the user\'s is lost', async () => {
    const { seen } = await childSees({ PYTORCH_ALLOC_CONF: 'garbage_collection_threshold:0.6', PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:False' });
    expect(seen).toEqual({ a: 'garbage_collection_threshold:0.6,expandable_segments:True', c: 'expandable_segments:False' });
  });
});
