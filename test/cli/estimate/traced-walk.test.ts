/**
 * The recorder's own bookkeeping, which runs on every op of a traced step, with real PyTorch: its walk over an op's
 * arguments and results finds exactly the tensors PyTorch's pytree walk finds (a wrapper subclass standing for the
 * tensors inside it), and exempting the objects that exist before the trace from garbage collection leaves the
 * step's own reference cycles collected as before. Needs the .venv/ test environment.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStepTrace, type TraceAlloc } from '../../../src/core/estimate/index.js';
import { requireTestPython } from '../../setup/python-venv.js';
import { runProcess } from '../../helpers/run-process.js';

const ROOT = join(__dirname, '../../..');

// The walk's answer and the reference's for each value, as object identities in order; a case that finds no tensor
// in the reference is an error, so a walk that finds nothing cannot pass.
const COMPARE = String.raw`
import collections, json, sys
import torch
from torch.utils._pytree import tree_leaves
from torch.testing._internal.two_tensor import TwoTensor
from gpumem_torch.trace._recorder import _plain_tensors

def reference(value):
    out = []
    for t in tree_leaves(value):
        if isinstance(t, torch.Tensor):
            if getattr(type(t), "__tensor_flatten__", None) is None:
                out.append(t)
            else:
                for name in t.__tensor_flatten__()[0]:
                    out.extend(reference(getattr(t, name)))
    return out

a, b, c = torch.ones(2), torch.zeros(3), torch.empty(1)
Pair = collections.namedtuple("Pair", "x y")
cases = {
    "tensor": a,
    "args": ((a, 2, None, torch.float16, [b, c], torch.Size([2])), {"out": c, "alpha": 1.5}),
    "nested lists": [[a, [b]], (c,), {}],
    "named tuple": (Pair(a, [b]), c),
    "return type": torch.max(torch.ones(3, 2), 0),
    "ordered dict": collections.OrderedDict([("k", b), ("j", a)]),
    "wrapper subclass": (TwoTensor(a, a.clone()), [b]),
    "device and strings": (torch.device("cpu"), "cuda", 3, [a]),
}
result = {}
for name, value in cases.items():
    expected = [id(t) for t in reference(value)]
    assert expected, name
    result[name] = {"walk": [id(t) for t in _plain_tensors(value)], "reference": expected}
print(json.dumps(result))
`;

describe('the recorder per op', () => {
  it('finds the same tensors, in the same order, as a pytree walk', async () => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PYTHONPATH: join(ROOT, 'python') };
    const r = await runProcess(requireTestPython(), ['-c', COMPARE], { env, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const cases = JSON.parse(r.stdout) as Record<string, { walk: number[]; reference: number[] }>;
    expect(Object.keys(cases)).toHaveLength(8);
    for (const [name, { walk, reference }] of Object.entries(cases)) expect(walk, name).toEqual(reference);
    expect(cases['wrapper subclass']!.reference).toHaveLength(3);
  });

  it("frees a storage held by the step's own reference cycle when the collector runs, before the next allocation", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpumem-cycle-'));
    try {
      const out = join(dir, 'trace.ndjson');
      const env = {
        PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '',
        PYTHONPATH: `${join(ROOT, 'python/_site')}:${join(ROOT, 'python')}`, GPUMEM_ESTIMATE_TRACE: out, GPUMEM_ESTIMATE_STEPS: '2',
      };
      const r = await runProcess(requireTestPython(), [join(ROOT, 'test/fixtures/estimate/trace/cycle_free.py')], { env, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      const t = parseStepTrace(readFileSync(out, 'utf8'));
      expect(t.error).toBeNull();
      const at = (pred: (i: number) => boolean): number[] => t.events.flatMap((_, i) => (pred(i) ? [i] : []));
      const held = at((i) => t.events[i]!.kind === 'alloc' && (t.events[i] as TraceAlloc).bytes === 4 << 20);
      const markers = at((i) => t.events[i]!.kind === 'alloc' && (t.events[i] as TraceAlloc).bytes === 3 << 20);
      expect(held).toHaveLength(2);
      expect(markers).toHaveLength(2);
      held.forEach((index, step) => {
        const id = (t.events[index] as TraceAlloc).id;
        const freed = t.events.findIndex((e) => e.kind === 'free' && e.id === id);
        expect(freed).toBeGreaterThan(index);
        expect(freed).toBeLessThan(markers[step]!);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
