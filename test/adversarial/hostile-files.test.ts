/**
 * Files a user hands gpumem, written to break it: snapshots pickled by Python with the wrong types in any
 * field (or a list that contains itself, or one nested 20,000 deep), stored run reports of the wrong shape,
 * a config.json that declares 10^15 layers, safetensors with no tensors, deeply nested or aliased pipeline
 * YAML, and history databases that are not databases. Each must end promptly with one clear line (or a
 * correct answer), never a hang or a stack trace. Pickles are written by the test environment's own Python.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { VENV_PYTHON } from '../setup/python-venv.js';
import { fakeH100, fakeNvmlEnv, writeScenario } from '../fake-nvml/scenario.js';
import { startHarness } from '../server/harness.js';
import { expectNoEscape, expectNoHang, expectNoStackTrace, gpumem, tempDir, type CliResult } from './harness.js';

const tmp = tempDir('gpumem-adv-files-');
afterAll(tmp.remove);

function expectClean(r: CliResult, what: string): void {
  expectNoHang(r, what);
  expectNoStackTrace(r, what);
}

/** Writes `name` with Python's own pickle.dump of the expression `value` (after `setup` statements). */
function pythonPickle(name: string, value: string, setup = ''): string {
  const path = join(tmp.dir, name);
  const script = `import pickle, sys\nsys.setrecursionlimit(100000)\n${setup}\npickle.dump(${value}, open(sys.argv[1], 'wb'), protocol=4)\n`;
  const r = spawnSync(VENV_PYTHON, ['-c', script, path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python could not write ${name}: ${r.stderr || r.error?.message}`);
  return path;
}

describe('snapshots pickled by Python with the wrong types', () => {
  const cases: Array<[string, string, string, RegExp]> = [
    ['a dict in segment_pool_id', "{'segments':[{'segment_pool_id':[{'toString':'x'}],'blocks':[]}]}", '', /segment 0: segment_pool_id\[0\] is a dict, not an integer/],
    ['a list as a block state', "{'segments':[{'device':0,'blocks':[{'state':['x'],'size':512}]}]}", '', /segment 0, block 0: state is a list, not a string/],
    ['a string as a segment address', "{'segments':[{'address':'0x10','blocks':[]}]}", '', /segment 0: address is a string, not a number/],
    ['a float device', "{'segments':[{'device':0.5,'blocks':[]}]}", '', /segment 0: device is 0.5, not a device index/],
    ['a dict as a trace action', "{'segments':[],'device_traces':[[{'action':{'a':1},'addr':0,'size':512}]]}", '', /trace entry 0: action is a dict, not a string/],
    ['a number where a trace list belongs', "{'segments':[],'device_traces':[[{'action':'alloc','size':512}], 5]}", '', /trace list in a way PyTorch never writes/],
    ['a dict as device_traces', "{'segments':[],'device_traces':{'a':1}}", '', /device_traces is a dict, not a list/],
    ['allocator_settings that contains itself', "{'segments':[],'allocator_settings':{'a':l}}", 'l = []; l.append(l)', /allocator_settings\.a\[0\]\[0\]\[0\] nests deeper than 4 levels \(or contains itself\)/],
    ['allocator_settings nested 20,000 deep', "{'segments':[],'allocator_settings':{'a':d}}", 'd = []\nfor _ in range(20000): d = [d]', /allocator_settings\.a.* nests deeper than 4 levels/],
  ];
  for (const [what, value, setup, message] of cases) {
    it(`${what}: one line naming the field, exit 2 (text, --json and --simulate)`, async () => {
      const file = pythonPickle(`${what.replace(/\W+/g, '-')}.pickle`, value, setup);
      for (const extra of [[], ['--json'], ['--simulate']]) {
        const r = await gpumem(['snapshot', file, ...extra]);
        expectClean(r, `snapshot (${what}) ${extra.join(' ')}`);
        expect(r.stderr).toMatch(message);
        expect(r.stderr.trim().split('\n')).toHaveLength(2);
        expect(r.code).toBe(2);
      }
    });
  }

  it('the same files uploaded to serve: 400 with the field named, never 500', async () => {
    const h = await startHarness();
    try {
      for (const [what, value, setup, message] of cases) {
        const body = readFileSync(pythonPickle(`upload-${what.replace(/\W+/g, '-')}.pickle`, value, setup));
        for (const query of ['', '?simulate=1']) {
          // The token is sent although uploads do not ask for one (yet), so the case keeps testing the reader if they do.
          const res = await fetch(`${h.base}/api/v1/snapshots${query}`, { method: 'POST', body, headers: { Authorization: `Bearer ${h.token}`, 'Content-Type': 'application/octet-stream' } });
          const doc = (await res.json()) as { error: { message: string } };
          expect(res.status, what).toBe(400);
          expect(doc.error.message).toMatch(message);
        }
      }
    } finally {
      await h.close();
    }
    // Twenty uploads, two of them 20,000 levels deep: 15–25 s on a busy 2-core machine, past the default 20 s.
  }, 60_000);

  it('terminal controls in keys, segment types, trace actions and settings are printed escaped', async () => {
    const file = pythonPickle('escapes.pickle', "{'segments':[{'device':0,'segment_type':'\\x1b[31mRED','blocks':[{'size':512,'state':'active_allocated'}]}],"
      + "'device_traces':[[{'action':'\\x1b]0;title\\x07','size':1}]],'allocator_settings':{'PYTORCH_CUDA_ALLOC_CONF':'\\x1b[2J'},'\\x1b[2Jkey':1}");
    const r = await gpumem(['snapshot', file]);
    expectClean(r, 'snapshot with escapes');
    expect(r.code).toBe(0);
    expectNoEscape(r.stdout, 'snapshot with escapes');
  });

  it('a JSON snapshot with an object where a number belongs: the same clear line', async () => {
    const file = join(tmp.dir, 'to-string.json');
    writeFileSync(file, JSON.stringify({ segments: [{ segment_pool_id: [{ toString: 'x' }], blocks: [] }] }));
    const r = await gpumem(['snapshot', file]);
    expectClean(r, 'JSON snapshot with {toString}');
    expect(r.stderr).toMatch(/segment_pool_id\[0\] is a dict, not an integer/);
    expect(r.code).toBe(2);
  });
});

describe('stored run reports of the wrong shape', () => {
  const scenario = join(tmp.dir, 'scenario.txt');
  writeScenario(scenario, { driverVersion: '590.44.01', cudaVersion: 13010, devices: [fakeH100(0)] });
  const db = join(tmp.dir, 'history.db');
  const shapes: Array<[string, string, RegExp]> = [
    ['attempts with empty objects', '{"attempts":[{}, {"exit":"x","peaks":"y"}]}', /report damaged: report\.attempts\[1\]\.exit is a string, not an object; report\.attempts\[1\]\.peaks is a string/],
    ['attempts as a string', '{"attempts":"none","env":[{"name":1}]}', /report damaged: report\.attempts is a string, not a list; report\.env\[0\]\.name is 1, not a string/],
    ['a list', '[{"attempts":[]}]', /report damaged: the report is a list, not an object/],
    ['100,000 levels deep', `{"attempts":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, /report damaged: the report nests deeper than 64 levels/],
    ['a companion with a string for its GPUs', '{"attempts":[{"attempt":1,"exit":{"code":0},"plugins":{"companion":{"gpus":"x","snapshots":[1,"/a.pickle"]}}}]}', /report damaged: report\.attempts\[0\]\.plugins\.companion\.gpus is a string, not a list; report\.attempts\[0\]\.plugins\.companion\.snapshots\[0\] is 1/],
  ];
  const ids: number[] = [];

  it('a real run is recorded, then its stored report is replaced by each wrong shape', async () => {
    for (let i = 0; i < shapes.length + 1; i++) {
      const r = await gpumem(['run', '--no-companion', '--interval-ms', '20', '--cleanup-timeout-ms', '200', '--db', db, '--', process.execPath, '-e', 'process.exit(0)'], { env: fakeNvmlEnv('590', scenario) });
      expect(r.code).toBe(0);
    }
    const raw = new Database(db);
    const rows = raw.prepare('SELECT id FROM runs ORDER BY id').all() as Array<{ id: number }>;
    shapes.forEach(([, json], i) => {
      raw.prepare('UPDATE runs SET report_json = ? WHERE id = ?').run(json, rows[i]!.id);
      ids.push(rows[i]!.id);
    });
    ids.push(rows[shapes.length]!.id);
    raw.close();
  });

  shapes.forEach(([what, , message], i) => {
    it(`runs show on a report that is ${what}: the run, then one "report damaged" line; --json carries the damage`, async () => {
      const r = await gpumem(['runs', 'show', String(ids[i]), '--db', db]);
      expectClean(r, `runs show (${what})`);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^run ${ids[i]}: `));
      expect(r.stdout).toMatch(message);
      const j = await gpumem(['runs', 'show', String(ids[i]), '--db', db, '--json']);
      expectClean(j, `runs show --json (${what})`);
      expect(j.code).toBe(0);
      expect((JSON.parse(j.stdout) as { reportDamage: string[] }).reportDamage.length).toBeGreaterThan(0);
    });
  });

  it('the intact run beside them still shows without damage', async () => {
    const r = await gpumem(['runs', 'show', String(ids[shapes.length]), '--db', db]);
    expectClean(r, 'runs show (intact)');
    expect(r.stdout).toMatch(/attempt 1: exit 0/);
    expect(r.stdout).not.toMatch(/damaged/);
  });

  it('serve answers every view of the damaged runs (200 with the damage, never 500)', async () => {
    const h = await startHarness({ dbPath: db });
    try {
      for (const id of ids) {
        for (const path of [`/api/v1/runs/${id}`, `/api/v1/runs/${id}/samples`, `/api/v1/runs/${id}/snapshots`, `/api/v1/page/runs/${id}/split`, `/api/v1/page/runs/${id}/steps`, `/api/v1/page/compare?a=${id}&b=${ids[0]}`]) {
          const res = await fetch(`${h.base}${path}`);
          expect(res.status, path).toBe(200);
        }
      }
    } finally {
      await h.close();
    }
  });
});

describe('model files that describe no real model', () => {
  const llama = { model_type: 'llama', hidden_size: 64, intermediate_size: 128, num_attention_heads: 2, num_hidden_layers: 2, vocab_size: 100 };
  const configs: Array<[string, Record<string, unknown> | string, RegExp]> = [
    // Written out as an integer, as a crafted file would: JSON.stringify would write 1e+15.
    ['10^15 layers', JSON.stringify(llama).replace('"num_hidden_layers":2', '"num_hidden_layers":1000000000000000'), /"num_hidden_layers" is 1000000000000000; gpumem estimates models with num_hidden_layers up to 10,000/],
    ['a vocabulary of 2^40', { ...llama, vocab_size: 2 ** 40 }, /"vocab_size" is 1099511627776; gpumem estimates models with vocab_size up to 16,777,216/],
    ['heads that do not divide the hidden size', { ...llama, num_attention_heads: 3 }, /"hidden_size" 64 is not a multiple of "num_attention_heads" 3/],
    ['KV heads that do not divide the heads', { ...llama, num_attention_heads: 4, num_key_value_heads: 3 }, /"num_attention_heads" 4 is not a multiple of "num_key_value_heads" 3/],
    ['patches that do not tile the image', { model_type: 'vit', hidden_size: 64, intermediate_size: 128, num_attention_heads: 2, num_hidden_layers: 2, image_size: 224, patch_size: 15 }, /"image_size" 224 is not a multiple of "patch_size" 15/],
  ];
  for (const [what, config, message] of configs) {
    it(`config.json with ${what}: one line saying the limit or the rule, exit 2, at once`, async () => {
      const file = join(tmp.dir, `${what.replace(/\W+/g, '-')}-config.json`);
      writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
      const r = await gpumem(['estimate', file], { timeoutMs: 10_000 });
      expectClean(r, `estimate (${what})`);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
    });
  }

  it('a model_type with terminal controls is printed escaped in the error', async () => {
    const file = join(tmp.dir, 'escape-config.json');
    writeFileSync(file, JSON.stringify({ model_type: '\u001b]0;owned\u0007llama' }));
    const r = await gpumem(['estimate', file]);
    expectClean(r, 'estimate model_type with escapes');
    expect(r.code).toBe(2);
    expectNoEscape(r.stderr, 'estimate model_type with escapes');
  });

  it('a config.json with 10,000 layers (the limit) is still estimated', async () => {
    const file = join(tmp.dir, 'deep-ok-config.json');
    writeFileSync(file, JSON.stringify({ ...llama, num_hidden_layers: 10_000 }));
    const r = await gpumem(['estimate', file, '--json'], { timeoutMs: 15_000 });
    expectClean(r, 'estimate 10,000 layers');
    expect(r.code).toBe(0);
  });

  for (const [what, header] of [['no tensors', { __metadata__: { format: 'pt' } }], ['only empty tensors', { a: { dtype: 'F32', shape: [0, 4], data_offsets: [0, 0] } }]] as const) {
    it(`a safetensors file with ${what}: refused in one line, not a 0-parameter estimate`, async () => {
      const json = Buffer.from(JSON.stringify(header));
      const size = Buffer.alloc(8);
      size.writeBigUInt64LE(BigInt(json.length));
      const file = join(tmp.dir, `${what.replace(/\W+/g, '-')}.safetensors`);
      writeFileSync(file, Buffer.concat([size, json]));
      const r = await gpumem(['estimate', file]);
      expectClean(r, `estimate safetensors with ${what}`);
      expect(r.stderr).toMatch(/so there is no model to estimate/);
      expect(r.code).toBe(2);
    });
  }
});

describe('pipeline files that nest or alias', () => {
  const files: Array<[string, string, RegExp]> = [
    ['20,000 flow brackets', `stages: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`, /deep\.yaml:1: nests deeper than 32 levels; a pipeline file needs 4/],
    ['20,000 nested block sequences', `stages:\n${'- '.repeat(20_000)}x\n`, /deep\.yaml:2: nests deeper than 32 levels/],
    ['an alias to a scalar and one to a mapping', 'env: &e\n  A: x\nstages:\n  - name: a\n    command: echo hi\n    env:\n      B: &b yes\n      C: *b\n  - name: b\n    command: echo\n    env: *e\n',
      /deep\.yaml:8: aliases \(\*b\) are not supported in pipeline files; write the value out; .*deep\.yaml:11: aliases \(\*e\) are not supported/],
  ];
  for (const [what, text, message] of files) {
    it(`${what}: one clear line, exit 2, nothing run`, async () => {
      const file = join(tmp.dir, 'deep.yaml');
      writeFileSync(file, text);
      for (const extra of [['--check'], []]) {
        const r = await gpumem(['pipeline', ...extra, file, '--no-history']);
        expectClean(r, `pipeline (${what}) ${extra.join(' ')}`);
        expect(r.stderr).toMatch(message);
        expect(r.code).toBe(2);
      }
    });
  }

  it('brackets and dashes inside quoted strings and comments do not count as nesting', async () => {
    const file = join(tmp.dir, 'quoted.yaml');
    writeFileSync(file, `# ${'['.repeat(100)}\nstages:\n  - name: "${'['.repeat(100)}"\n    command: [echo, '${'{'.repeat(100)}']\n`);
    const r = await gpumem(['pipeline', '--check', file]);
    expectClean(r, 'pipeline with brackets in strings');
    expect(r.code).toBe(0);
  });
});

describe('history databases that are not usable', () => {
  it('a damaged database, /dev/null, a directory and a text file as --db: all exit 2 with a hint, none is changed', async () => {
    const good = join(tmp.dir, 'good.db');
    const made = await gpumem(['runs', '--db', good]);
    expect(made.code).toBe(0);
    // A real history made by a run, then cut short and overwritten in the middle: "database disk image is malformed".
    const scenario = join(tmp.dir, 'scenario-db.txt');
    writeScenario(scenario, { driverVersion: '590.44.01', cudaVersion: 13010, devices: [fakeH100(0)] });
    const real = join(tmp.dir, 'real.db');
    for (let i = 0; i < 3; i++) await gpumem(['run', '--no-companion', '--interval-ms', '20', '--cleanup-timeout-ms', '200', '--db', real, '--', process.execPath, '-e', 'process.exit(0)'], { env: fakeNvmlEnv('590', scenario) });
    const bytes = readFileSync(real);
    const damaged = join(tmp.dir, 'damaged.db');
    writeFileSync(damaged, Buffer.concat([bytes.subarray(0, 4096), Buffer.alloc(Math.max(0, bytes.length - 4096), 0x5a)]));
    const text = join(tmp.dir, 'notes.txt');
    writeFileSync(text, 'not a database\n'.repeat(300));
    const cases: Array<[string, RegExp]> = [
      [damaged, /hint: this file is damaged or not a gpumem history; move it aside/],
      ['/dev/null', /it is a device, not a database file\nhint: give --db the path of a history file/],
      [tmp.dir, /it is a directory, not a database file/],
      [text, /hint: this file is damaged or not a gpumem history/],
    ];
    for (const [db, message] of cases) {
      const before = db === tmp.dir || db === '/dev/null' ? null : readFileSync(db);
      for (const args of [['runs'], ['runs', 'show', '1']]) {
        const r = await gpumem([...args, '--db', db]);
        expectClean(r, `${args.join(' ')} --db ${db}`);
        expect(r.stderr, db).toMatch(message);
        expect(r.code, db).toBe(2);
      }
      if (before) expect(readFileSync(db).equals(before)).toBe(true);
    }
  });
});
