/**
 * `%load_ext gpumem_torch` in a real IPython kernel (ipykernel, driven by jupyter_client, from .venv-notebook/)
 * with the fake torch of the companion tests for CUDA numbers: the line after each cell, `%gpumem` naming every
 * holder — the hidden ones that keep memory after `del` each with a case — and `%gpumem free` giving it back.
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireNotebookPython, requireTestPython } from '../setup/python-venv.js';
import { runProcess } from '../helpers/run-process.js';

const DRIVER = resolve(__dirname, 'notebook/run_cells.py');

interface Cell { out: string; result: string | null; error: string | null }

/** Runs the cells in one fresh kernel (the extension loaded first) and returns what each showed. */
async function notebook(cells: string[], load = true): Promise<Cell[]> {
  const python = requireNotebookPython();
  const all = load ? ['%load_ext gpumem_torch', ...cells] : cells;
  const run = await runProcess(python, [DRIVER], { input: JSON.stringify(all), encoding: 'utf8', timeout: 90_000 });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  let shown: Cell[];
  try {
    shown = JSON.parse(last) as Cell[];
  } catch {
    throw new Error(`the kernel driver failed (${run.status ?? run.signal}): ${run.stderr.slice(-2000)}`);
  }
  expect(shown[0]?.error ?? null, 'loading the extension').toBeNull();
  return load ? shown.slice(1) : shown;
}

const GIB_CELL = 'import torch\nx = torch.zeros(256, 1024, 1024, device="cuda")';
/** The "allocated" figure of each device line `%gpumem` or `%gpumem free` printed last. */
const allocatedNow = (text: string): string => /cuda:0 (?:allocated \S+ \S+ → )?(\S+ \S+)(?: allocated| \()/.exec(text)?.[1] ?? '?';

describe('notebook extension in a real kernel', () => {
  it('after each cell that changed GPU memory: the change, the peak inside the cell, what is held now; nothing otherwise', async () => {
    const [alloc, quiet, temp, none] = await notebook([GIB_CELL, 'y = 1 + 1', 't = torch.zeros(128, 1024, 1024, device="cuda")\ndel t', 'print("hi")']);
    expect(alloc!.out).toBe('gpumem: cuda:0 +1.00 GiB this cell (peak 1.00 GiB inside it) · now 1.00 GiB allocated, 1.00 GiB reserved\n');
    expect(quiet!.out).toBe('');
    // Nothing kept, but the cell peaked half a GiB higher (and PyTorch keeps the block cached).
    expect(temp!.out).toBe('gpumem: cuda:0 0 B this cell (peak 1.50 GiB inside it) · now 1.00 GiB allocated, 1.50 GiB reserved\n');
    expect(none!.out).toBe('hi\n');
  }, 120_000);

  it('before torch uses CUDA there is nothing to report, and %gpumem says so', async () => {
    const [who, plain] = await notebook(['%gpumem', 'import torch\nz = torch.zeros(4)']);
    expect(who!.out).toBe('gpumem: no CUDA memory in this kernel (torch is not imported, or has not used CUDA yet)\n');
    expect(plain!.out).toBe('');
  }, 120_000);

  it('Out[n], _ and _n keep a displayed tensor after del; %gpumem names them, %gpumem free Out[n] gives it back', async () => {
    const [, shown, , who, freed] = await notebook([GIB_CELL, 'x', 'del x', '%gpumem', '%gpumem free Out[3]']);
    expect(shown!.result).toMatch(/Tensor/);
    expect(who!.out).toMatch(/^gpumem: cuda:0 1\.00 GiB allocated, 1\.00 GiB reserved/);
    expect(who!.out).toMatch(/^ {2}Out\[3\] +1\.00 GiB {2}output of cell 3, kept by IPython's output cache \(also as _, _3\) — drop: %gpumem free Out\[3\]$/m);
    expect(freed!.out).toMatch(/^gpumem: cuda:0 allocated 1\.00 GiB → 0 B \(-1\.00 GiB\), reserved 1\.00 GiB → 0 B \(-1\.00 GiB\)$/m);
    expect(freed!.out).toMatch(/^ {2}Out\[3\]: dropped; every tensor it held is freed$/m);
  }, 120_000);

  it('freeing only _ says that Out[n] still holds the tensor, and how to drop it', async () => {
    const [, , , freed] = await notebook([GIB_CELL, 'x', 'del x', '%gpumem free _']);
    expect(allocatedNow(freed!.out)).toBe('1.00 GiB');
    expect(freed!.out).toMatch(/_: dropped, but 1 tensor\(s\), 1\.00 GiB, are still held by: Out\[3\] \(%gpumem free Out\[3\]\)/);
  }, 120_000);

  it('the last error\'s traceback keeps the failed function\'s locals; %gpumem free traceback releases them', async () => {
    const [failed, who, freed] = await notebook([
      'import torch\ndef step():\n    activations = torch.zeros(512, 1024, 1024, device="cuda")\n    raise RuntimeError("CUDA out of memory")\nstep()',
      '%gpumem', '%gpumem free traceback',
    ]);
    expect(failed!.error).toBe('RuntimeError');
    expect(who!.out).toMatch(/^ {2}traceback +2\.00 GiB {2}locals of the last error's frames \(step\(\)\), kept by sys\.last_traceback — drop: %gpumem free traceback$/m);
    expect(freed!.out).toMatch(/allocated 2\.00 GiB → 0 B/);
    expect(freed!.out).toMatch(/traceback: dropped; every tensor it held is freed/);
  }, 120_000);

  it('a closure keeps what it closed over after the function that made it returned', async () => {
    const [, who, freed] = await notebook([
      'import torch\ndef make():\n    table = torch.zeros(64, 1024, 1024, device="cuda")\n    return lambda i: table.shape[0] + i\nlookup = make()',
      '%gpumem', '%gpumem free lookup',
    ]);
    expect(who!.out).toMatch(/^ {2}lookup +256\.00 MiB {2}closure of function lookup\(\)/m);
    expect(freed!.out).toMatch(/allocated 256\.00 MiB → 0 B/);
  }, 120_000);

  it('optimizer state is its own holder; freeing the optimizer leaves the model\'s parameters, and says so', async () => {
    const [, who, freed] = await notebook([
      'import torch\nmodel = torch.nn.Module()\nmodel.add_parameter(64 << 20)\nopt = torch.optim.Adam(model.parameters())\nopt.step()',
      '%gpumem', '%gpumem free opt',
    ]);
    expect(who!.out).toMatch(/^ {2}opt +512\.00 MiB {2}optimizer state \(moments kept between steps; the parameters are the model's\)/m);
    expect(who!.out).toMatch(/^ {2}model +256\.00 MiB {2}module \(parameters and their gradients\)/m);
    expect(freed!.out).toMatch(/allocated 768\.00 MiB → 256\.00 MiB \(-512\.00 MiB\)/);
    // The parameters it pointed at are the model's: named as what still holds them.
    expect(freed!.out).toMatch(/opt: dropped, but 1 tensor\(s\), 256\.00 MiB, are still held by: model \(%gpumem free model\)/);
  }, 120_000);

  it('a kept loss keeps its autograd graph (the tensors saved for backward), even after del of the inputs', async () => {
    const [, who, detached, after] = await notebook([
      'import torch\nw = torch.zeros(1024, 1024, device="cuda")\nx = torch.zeros(32768, 1024, device="cuda")\nloss = torch.matmul(x, w).sum()\ndel x',
      '%gpumem', 'loss = loss.detach()', '%gpumem',
    ]);
    expect(who!.out).toMatch(/^ {2}loss\.grad_fn +132\.00 MiB {2}autograd graph kept by loss \(tensors saved for backward\) — drop: loss = loss\.detach\(\)/m);
    // The input deleted by name is gone from the names but not from memory: 128 MiB of x and 4 MiB of w (the
    // product was not saved: sum keeps only its sizes).
    expect(allocatedNow(who!.out)).toBe('132.00 MiB');
    expect(detached!.out).toMatch(/^gpumem: cuda:0 -128\.00 MiB this cell/);
    expect(after!.out).not.toMatch(/grad_fn/);
  }, 120_000);

  it('a name that does not exist is said so, and the others are still freed', async () => {
    const [, freed] = await notebook([GIB_CELL, '%gpumem free nosuch x']);
    expect(freed!.out).toMatch(/^gpumem: nosuch: no such name in this kernel$/m);
    expect(freed!.out).toMatch(/x: dropped; every tensor it held is freed/);
  }, 120_000);
});

describe('the holder scan against real torch', () => {
  it('finds a module\'s parameters and gradients, Adam\'s state and a real graph\'s saved tensors', async () => {
    const run = await runProcess(requireTestPython(), [resolve(__dirname, 'notebook/real_torch_scan.py')], { encoding: 'utf8', timeout: 120_000 });
    expect(run.status, run.stderr).toBe(0);
    const { found, params } = JSON.parse(run.stdout.trim().split('\n').pop()!) as { found: Record<string, number>; params: number };
    expect(found.model).toBe(2 * params); // parameters and their gradients
    expect(found.opt).toBe(2 * params + 4 * 4); // exp_avg and exp_avg_sq per parameter, and a step count each
    // Saved for backward, each storage once: the batch (32×256, mat1 of the first addmm), the first ReLU's result
    // (32×256, also mat1 of the second addmm), the second weight (10×256, mat2) and the last ReLU's result (32×10);
    // the first weight is not saved (the batch needs no gradient). float32.
    expect(found['loss.grad_fn']).toBe((32 * 256 + 32 * 256 + 10 * 256 + 32 * 10) * 4);
  }, 150_000);
});
