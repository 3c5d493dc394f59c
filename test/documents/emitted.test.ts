/**
 * Every JSON document gpumem emits validates against its schema in the registry (src/server/documents/): the
 * built CLI (dist/cli/bin.js) run for each `--json` command against the fake NVML driver and real processes,
 * and a real server asked every route of its table. Each document is also broken two ways (its version changed,
 * a required field removed) and must then be rejected, so no check passes by accepting anything; where a
 * schema describes nested objects, the breaks of nested-breaks.ts deep inside it must be rejected too. The
 * last tests say which kinds no test here emits, and why, and that every nested break met a document.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTS, documentEntry } from '../../src/server/documents/index.js';
import { ROUTES } from '../../src/server/routes/table.js';
import { BIN } from '../helpers/cli.js';
import { documentProblems } from '../helpers/document-schemas.js';
import { NESTED_BREAKS, broken, expectedAt } from './nested-breaks.js';
import { SNAPSHOT_FIXTURES } from '../setup/snapshot-fixtures.js';
import { GiB, PROCS, tempDir } from '../supervise/helpers/claims.js';
import { PY, companionSetup, dataLoaderLoop } from '../supervise/helpers/companion-e2e.js';
import { startPump, type Pump } from '../supervise/helpers/pump.js';
import { startHarness, type Harness } from '../server/harness.js';

const OOM_LOG = fileURLToPath(new URL('../fixtures/oom/train-sample.txt', import.meta.url));
const FIT_TRAIN = fileURLToPath(new URL('../fixtures/fit/fake-train.mjs', import.meta.url));
/** A small Llama config.json: the estimate's config mode. */
const LLAMA_CONFIG = fileURLToPath(new URL('../fixtures/estimate/trace/tiny_llama/config.json', import.meta.url));
/** A training script for the fake torch that allocates, is shown by the fake driver, and OOMs. */
const SUPERVISED_TRAIN = join(PY, 'scripts', 'supervised_train.py');
/** The bundled example recording: processes with host facts, and findings for the diagnosis to report. */
const EXAMPLE_RECORDING = fileURLToPath(new URL('../../examples/doctor-example.ndjson', import.meta.url));
/** A real snapshot with its allocator trace, so a what-if replay has something to replay. */
const REAL_SNAPSHOT = fileURLToPath(new URL('../fixtures/snapshot/real/constructor_memory_snapshot.pickle', import.meta.url));

/** Kinds no test here can emit, with the reason; every other kind must be checked below. */
const NOT_EMITTED_HERE: Record<string, string> = {
  'gpumem.estimate-traced': "the CLI needs PyTorch to trace a step (torch tier); the builder's document is checked in traced-documents.test.ts",
  'gpumem.estimate-traced-stages': 'as gpumem.estimate-traced: checked in traced-documents.test.ts',
  'gpumem.companion-message': 'written by the Python companion inside a PyTorch process: checked in companion-messages.test.ts',
};

const checked = new Set<string>();
/** The nested breaks ("kind path") some emitted document had a value at, and so was checked with. */
const brokenDeep = new Set<string>();

/** Asserts each nested break of `kind` that `doc` has a value for is rejected at its path. */
function expectNestedBreaksRejected(kind: string, doc: unknown, where: string): void {
  for (const brk of NESTED_BREAKS[kind] ?? []) {
    const copy = broken(doc, brk);
    if (copy === null) continue;
    const at = expectedAt(brk);
    const problems = documentProblems(kind, copy);
    expect(problems.some((p) => p.startsWith(`${at} `) || p.startsWith(`${at}/`)), `${where}: ${brk.path.join('.')} broken, problems: ${problems.join('; ')}`).toBe(true);
    brokenDeep.add(`${kind} ${brk.path.join('.')}`);
  }
}

/** Asserts `doc` is a valid `kind` document and that two broken copies of it are not. */
function expectDocument(kind: string, doc: unknown, where: string): void {
  expect(documentProblems(kind, doc), `${where} as ${kind}`).toEqual([]);
  const entry = documentEntry(kind);
  const versionField = kind === 'gpumem.recording' ? 'version' : 'schemaVersion';
  const object = doc as Record<string, unknown>;
  expect(documentProblems(kind, { ...object, [versionField]: entry.version + 1 }), `${where}: a changed version`).not.toEqual([]);
  const field = (entry.schema.required as string[]).find((name) => name !== versionField && name !== 'kind') as string;
  const { [field]: _dropped, ...without } = object;
  expect(documentProblems(kind, without), `${where} without ${field}`).toContain(`/ must have required property '${field}'`);
  expectNestedBreaksRejected(kind, doc, where);
  checked.add(kind);
}

interface Result { code: number | null; stdout: string; stderr: string }

/** One run of the built CLI, awaited (not spawnSync: the pump must keep writing the driver's scenario meanwhile). */
function gpumem(args: string[], env: Record<string, string>, cwd?: string): Promise<Result> {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1', ...env }, cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Runs the command and checks its stdout as one `kind` document; returns it. */
async function expectJson(kind: string, args: string[], env: Record<string, string>, codes: number[] = [0]): Promise<Record<string, unknown>> {
  const r = await gpumem(args, env);
  expect(codes, `${args.join(' ')}: ${r.stderr}`).toContain(r.code);
  const doc = JSON.parse(r.stdout) as Record<string, unknown>;
  expectDocument(kind, doc, `gpumem ${args[0]}`);
  return doc;
}

describe('the --json documents of the built CLI', () => {
  let pump: Pump;
  let dir: string;
  const cleanups: Array<() => void> = [];
  beforeAll(() => {
    const tmp = tempDir('gpumem-documents-');
    dir = tmp.dir;
    pump = startPump(dir);
    cleanups.push(() => pump.stop(), tmp.remove);
  });
  afterAll(() => cleanups.splice(0).forEach((f) => f()));

  it('status, doctor, diagnose, estimate and python-path', async () => {
    await expectJson('gpumem.status', ['status', '--json'], pump.env);
    expect((await expectJson('gpumem.diagnose', ['doctor', '--json'], pump.env, [0, 1])).command).toBe('doctor');
    expect((await expectJson('gpumem.diagnose', ['diagnose', '--json'], pump.env, [0, 1])).command).toBe('diagnose');
    const replayed = await expectJson('gpumem.diagnose', ['diagnose', '--replay', EXAMPLE_RECORDING, '--json'], {}, [0, 1]);
    // The bundled example, recorded on an H100: the trainer's DataLoader workers 2305 and 2306 hold CUDA contexts.
    expect((replayed.findings as Array<{ id: string; evidence: { pids: number[] } }>).find((f) => f.id === 'worker-cuda')?.evidence.pids).toEqual([2305, 2306]);
    await expectJson('gpumem.status', ['status', '--replay', EXAMPLE_RECORDING, '--json'], {});
    await expectJson('gpumem.estimate', ['estimate', '--params', '1B', '--gpu', '4090', '--json'], {});
    // From a config, with every optional part: a budget, accumulation, stages and progressive unfreezing.
    const config = await expectJson('gpumem.estimate', ['estimate', LLAMA_CONFIG, '--gpu', '4090', '--effective-batch', '64', '--stages', 'a:freeze=model.embed_tokens b:full', '--unfreeze', 'model.layers.0+model.layers.1,lm_head', '--json'], {}, [0, 1]);
    expect((config.stages as unknown[]).length).toBe(2);
    await expectJson('gpumem.python-path', ['python-path', '--json'], {});
  });

  it('explain, whole and as it follows a log', async () => {
    const whole = await expectJson('gpumem.explain', ['explain', OOM_LOG, '--json'], {}, [1]);
    expect((whole.events as unknown[]).length).toBeGreaterThan(0);
    // --follow prints one document per OOM; the log already holds one, so the first line comes at once.
    const child = spawn(process.execPath, [BIN, 'explain', '--follow', '--json', OOM_LOG], { env: { ...process.env, NO_COLOR: '1' } });
    const line = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
      });
    });
    child.kill('SIGINT');
    expectDocument('gpumem.explain-event', JSON.parse(line), 'explain --follow');
  });

  it('snapshot, with a what-if replay, and snapshot diff', async () => {
    const doc = await expectJson('gpumem.snapshot', ['snapshot', REAL_SNAPSHOT, '--json', '--what-if', 'expandable_segments:True'], {});
    expect((doc.devices as Array<{ simulation?: unknown }>).some((d) => d.simulation)).toBe(true);
    await expectJson('gpumem.snapshot.diff', ['snapshot', 'diff', join(SNAPSHOT_FIXTURES, 'diff-a.pickle'), join(SNAPSHOT_FIXTURES, 'diff-b.pickle'), '--json'], {});
  });

  it('run, runs, runs show and pipeline, through one history', async () => {
    const db = join(dir, 'history.db');
    const run = await expectJson('gpumem.run', ['run', '--gpus', '1', '--db', db, '--json', '--source', 'nvml', '--interval-ms', '20', '--', process.execPath, join(PROCS, 'worker-tree.mjs'), '--claim', `1:${GiB}`, '--hold-ms', '300'], pump.env);
    expect((run.peaks as unknown[]).length).toBeGreaterThan(0);
    const file = join(dir, 'pipeline.yaml');
    writeFileSync(file, `name: documents\ngpus: "0"\nstages:\n  - name: first\n    command: "true"\n  - name: second\n    command: "true"\n`);
    await expectJson('gpumem.pipeline', ['pipeline', file, '--db', db, '--json'], pump.env);
    const runs = await expectJson('gpumem.runs', ['runs', '--db', db, '--json'], {});
    expect((runs.runs as unknown[]).length).toBe(3);
    expect((runs.pipelines as unknown[]).length).toBe(1);
    await expectJson('gpumem.run-detail', ['runs', 'show', String(run.runId), '--db', db, '--json'], {});
  });

  it('run with the PyTorch companion (fake torch): an OOM joined to its allocator capture, and a snapshot replayed', async () => {
    const t = companionSetup(cleanups);
    const doc = await expectJson('gpumem.run', ['run', '--gpus', '0', '--json', '--source', 'nvml', '--interval-ms', '20', '--companion-rate', '50', '--snapshot-on-oom', '--', 'python3', SUPERVISED_TRAIN, 'oom', '0.4'], t.env, [1]);
    const attempt = (doc.attempts as Array<{ ooms: Array<{ allocator?: unknown }>; plugins: { companion?: { gpus: unknown[] } } }>)[0];
    expect(attempt?.ooms[0]?.allocator).toBeDefined();
    expect(attempt?.plugins.companion?.gpus.length).toBe(1);
  });

  it('run of a training loop under the fake torch as rank 0: step timing, the rank and the findings they give', async () => {
    const t = companionSetup(cleanups);
    const env = { ...t.env, RANK: '0', LOCAL_RANK: '0', WORLD_SIZE: '1' };
    const doc = await expectJson('gpumem.run', ['run', '--no-history', '--json', '--source', 'nvml', '--interval-ms', '50', '--batch', '128', '--', 'python3', '-c', dataLoaderLoop(5, 5, 96)], env);
    const companion = (doc.attempts as Array<{ plugins: { companion?: { processes: Array<{ steps?: unknown }>; ranks?: unknown[] } } }>)[0]?.plugins.companion;
    expect(companion?.processes[0]?.steps).toEqual(expect.objectContaining({ steps: 20 }));
    expect(companion?.ranks?.length).toBe(1);
  });

  it('fit', async () => {
    const doc = await expectJson('gpumem.fit', ['fit', '--gpus', '1', '--source', 'nvml', '--interval-ms', '15', '--steps', '3', '--json', '--', process.execPath, FIT_TRAIN, '--batch', '{batch}', '--steps', '{steps}', '--gpu', '1', '--fixed', String(2 * GiB), '--per', String(GiB)], pump.env);
    expect(doc.batch).toEqual(expect.any(Number));
  });

  it('kill --dry-run, with a process of ours holding memory on the GPU', async () => {
    const holder = spawn(process.execPath, [join(PROCS, 'worker-tree.mjs'), '--claim', `1:${GiB}`, '--hold-ms', '20000'], { env: { ...process.env, ...pump.env }, stdio: 'ignore' });
    cleanups.push(() => holder.kill('SIGKILL'));
    let doc: Record<string, unknown> = {};
    // The pump shows the claim to the driver within a few ms; ask until the row is there.
    for (let i = 0; i < 100 && !(doc.rows as unknown[] | undefined)?.length; i++) {
      doc = JSON.parse((await gpumem(['kill', '--gpu', '1', '--dry-run', '--json'], pump.env)).stdout) as Record<string, unknown>;
    }
    expect((doc.rows as Array<{ pid: number }>).map((r) => r.pid)).toContain(holder.pid);
    expectDocument('gpumem.kill', doc, 'kill --dry-run');
    // The same process in the status document, with the host facts a live read gives (its job among them).
    const status = await expectJson('gpumem.status', ['status', '--json'], pump.env);
    expect((status.processes as Array<{ pid: number }>).map((p) => p.pid)).toContain(holder.pid);
    holder.kill('SIGKILL');
  });

  it("record: the recording's header line", async () => {
    const out = join(dir, 'rec.ndjson');
    const r = await gpumem(['record', '--out', out, '--interval', '100', '--duration', '0.3'], pump.env);
    expect(r.code, r.stderr).toBe(0);
    expectDocument('gpumem.recording', JSON.parse(readFileSync(out, 'utf8').split('\n')[0] as string), 'record');
  });
});

describe("the documents of a real server's routes", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ dbPath: 'fixture' });
  });
  afterAll(() => h.close());

  it('every JSON route of the table answers the document the table names for its status', async () => {
    const runs = (await (await fetch(`${h.base}/api/v1/runs`)).json()) as { runs: Array<{ id: number }> };
    const id = String(runs.runs[0]?.id);
    const auth = { Authorization: `Bearer ${h.token}` };
    const pickle = readFileSync(REAL_SNAPSHOT);
    const asks: Array<[string, string, RequestInit?]> = [];
    for (const route of ROUTES) {
      // The event stream and /metrics answer text; their errors alone are not a document to ask for.
      if (!Object.values(route.responses).some((r) => r.body !== undefined && r.body !== 'error')) continue;
      const path = route.path.replace('{id}', id).replace('{n}', '0').replace('{pid}', String(h.hostilePid));
      if (route.path === '/api/v1/page/compare') asks.push([route.path, `${path}?a=${id}&b=${id}`]);
      else if (route.method === 'POST' && route.path === '/api/v1/snapshots') {
        asks.push([route.path, path, { method: 'POST', headers: auth, body: pickle }], [route.path, `${path}?view=page&whatIf=expandable_segments:True`, { method: 'POST', headers: auth, body: pickle }]);
      } else if (route.method === 'POST') asks.push([route.path, path, { method: 'POST', headers: auth }]);
      else asks.push([route.path, path]);
    }
    for (const [template, path, init] of asks) {
      const res = await fetch(`${h.base}${path}`, init);
      const documented = ROUTES.find((r) => r.path === template && (init?.method ?? 'GET') === r.method)?.responses[String(res.status)];
      expect(documented, `${path}: status ${res.status}`).toBeDefined();
      const body = (await res.json()) as { kind?: string };
      if (documented?.body === 'error') continue;
      // A route with several documents (the snapshot analyses) answers one of them, named by its kind.
      const kind = Array.isArray(documented?.body) ? (body.kind as string) : (documented?.body as string);
      expectDocument(kind, body, path);
    }
    for (const kind of ['gpumem.status', 'gpumem.diagnose', 'gpumem.runs', 'gpumem.run-detail', 'gpumem.kill', 'gpumem.page-snapshot', 'gpumem.snapshot', 'gpumem.page-compare']) {
      expect(checked.has(kind), kind).toBe(true);
    }
  }, 60_000);
});

describe('coverage', () => {
  it('every registered kind was checked above, or is named with the reason it cannot be emitted here', () => {
    const missing = DOCUMENTS.map((d) => d.kind).filter((k) => !checked.has(k) && !(k in NOT_EMITTED_HERE));
    expect(missing).toEqual([]);
    expect(Object.keys(NOT_EMITTED_HERE).filter((k) => checked.has(k))).toEqual([]);
  });

  it('every nested break met an emitted document that has a value at its path', () => {
    const unmet = Object.entries(NESTED_BREAKS).flatMap(([kind, breaks]) => breaks.map((brk) => `${kind} ${brk.path.join('.')}`)).filter((k) => !brokenDeep.has(k));
    expect(unmet).toEqual([]);
  });
});
