/**
 * docs/serve.openapi.json, read by the suite: every GET path it lists answers a real server (the fake driver,
 * a history with runs) with a status it documents and a body its schema for that status accepts (ajv, strict), every
 * API path the page calls is listed in it, and the committed file is the one `npm run docs` generates from the
 * route table and the document schemas. The validator is checked to fail on a bad document first.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiText } from '../../src/server/openapi.js';
import type { JsonSchema } from '../../src/server/documents/index.js';
import { strictAjv } from '../helpers/document-schemas.js';
import { startHarness, type Harness } from './harness.js';

const SPEC = JSON.parse(readFileSync(new URL('../../docs/serve.openapi.json', import.meta.url), 'utf8')) as JsonSchema & {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }> }>>;
};
const PAGE_DIR = new URL('../../src/server/page/', import.meta.url);

// The file as one schema resource, so a response schema's "#/components/…" reference resolves into it; its
// OpenAPI keywords are declared to ajv as annotations, so strict mode still refuses any unknown schema keyword.
const ajv = strictAjv();
ajv.addVocabulary(['openapi', 'info', 'servers', 'paths', 'components']);
ajv.addSchema({ ...SPEC, $id: 'serve.openapi.json' });

/** Problems of `value` against a schema of the file ("path message" each; empty when it validates). */
function validate(value: unknown, schema: JsonSchema): string[] {
  const json = JSON.stringify(schema).replace(/"#\//g, '"serve.openapi.json#/');
  const check = ajv.compile(JSON.parse(json) as object);
  return check(value) ? [] : (check.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`.trim());
}

let h: Harness;
let runId = 0;
beforeAll(async () => {
  h = await startHarness({ dbPath: 'fixture' });
  const runs = (await (await fetch(`${h.base}/api/v1/runs`)).json()) as { runs: Array<{ id: number; status: string }> };
  runId = runs.runs.find((r) => r.status === 'failed')?.id ?? 0;
});
afterAll(() => h.close());

/** A path of the file with its parameters filled in for the fixture history. */
const concrete = (template: string): string => template.replace('{id}', String(runId)).replace('{n}', '0').replace('{pid}', '1');

/** Whether a concrete path (without its query) is an instance of a path template of the file. */
const matches = (template: string, path: string): boolean => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path);

describe('docs/serve.openapi.json', () => {
  it('the schema check fails on a document that breaks its schema', () => {
    expect(validate({ error: { code: 'NOT_FOUND', message: 'no run' } }, { $ref: '#/components/schemas/Error' })).toEqual([]);
    expect(validate({ error: { code: 404 } }, { $ref: '#/components/schemas/Error' })).toEqual(["/error must have required property 'message'", '/error/code must be string']);
    expect(validate({ schemaVersion: 2, kind: 'gpumem.status' }, { $ref: '#/components/schemas/Status' }).length).toBeGreaterThan(0);
    expect(validate([1, 'x'], { type: 'array', items: { type: 'integer', minimum: 0 } })).toEqual(['/1 must be integer']);
    expect(() => validate({}, { type: 'object', unknownKeyword: true })).toThrow(/unknown keyword/);
  });

  it('every GET path answers with a documented status and a body its schema accepts', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const [template, methods] of Object.entries(SPEC.paths)) {
      const get = methods.get;
      // The event stream and the Prometheus text are not JSON documents (their own tests read them).
      if (!get || template === '/api/v1/events' || template === '/metrics') continue;
      const res = await fetch(`${h.base}${concrete(template)}`);
      const documented = get.responses[String(res.status)];
      if (!documented) {
        problems.push(`${template}: status ${res.status} is not documented`);
        continue;
      }
      const schema = documented.content?.['application/json']?.schema;
      if (!schema) continue;
      checked++;
      problems.push(...validate(await res.json(), schema).map((p) => `${template} (${res.status}): ${p}`));
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(10);
  });

  it('is the file npm run docs generates from the route table and the document schemas', () => {
    expect(readFileSync(new URL('../../docs/serve.openapi.json', import.meta.url), 'utf8')).toBe(openApiText());
  });

  it('lists every API path the page calls', () => {
    const called = new Set<string>();
    for (const name of readdirSync(PAGE_DIR).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(new URL(name, PAGE_DIR), 'utf8');
      // `/api/v1/runs/${id}/samples` → /api/v1/runs/X/samples; the query is not part of the path.
      for (const m of text.matchAll(/[`'](\/api\/v1\/[^`'?]*)/g)) called.add((m[1] as string).replace(/\$\{[^}]+\}/g, 'X'));
    }
    expect(called.size).toBeGreaterThan(5);
    const missing = [...called].filter((path) => !Object.keys(SPEC.paths).some((template) => matches(template, path)));
    expect(missing).toEqual([]);
  });
});
