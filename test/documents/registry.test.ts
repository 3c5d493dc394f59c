/**
 * The registry of public JSON documents: one entry per kind, each schema a valid JSON Schema that ajv compiles in
 * strict mode, its `schemaVersion` (or recording `version`) fixed to the entry's version, and its home module
 * really holding it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS, documentEntry } from '../../src/server/documents/index.js';
import { withDocumentsTable } from '../../src/server/documents/markdown.js';
import { documentProblems, strictAjv } from '../helpers/document-schemas.js';

const ROOT = new URL('../../', import.meta.url);

describe('the document registry', () => {
  it('lists each kind once, under the gpumem. prefix', () => {
    const kinds = DOCUMENTS.map((d) => d.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    expect(kinds.filter((k) => !/^gpumem\.[a-z][a-z.-]*$/.test(k))).toEqual([]);
    expect(kinds.length).toBeGreaterThan(25);
  });

  it('every schema is a valid JSON Schema that compiles in strict mode', () => {
    const ajv = strictAjv();
    for (const d of DOCUMENTS) {
      expect(ajv.validateSchema(d.schema as object), `${d.kind}: ${ajv.errorsText()}`).toBe(true);
      expect(() => ajv.compile(d.schema as object), d.kind).not.toThrow();
    }
  });

  it("every schema fixes the document's version and, where the document carries one, its kind", () => {
    for (const d of DOCUMENTS) {
      const props = d.schema.properties as Record<string, { const?: unknown }>;
      const versionField = d.kind === 'gpumem.recording' ? 'version' : 'schemaVersion';
      expect(props[versionField]?.const, d.kind).toBe(d.version);
      expect(d.schema.required, d.kind).toContain(versionField);
      expect(props.kind?.const ?? null, d.kind).toBe(d.kindInDocument);
    }
  });

  it('every entry names a home module that exists and holds its schema, and a page that exists', () => {
    for (const d of DOCUMENTS) {
      const module = new URL(d.module, ROOT);
      expect(existsSync(module), d.module).toBe(true);
      expect(readFileSync(module, 'utf8'), d.module).toMatch(/Schema = /);
      expect(existsSync(new URL(d.doc, ROOT)), d.doc).toBe(true);
    }
  });

  it("docs/output-files.md's table of documents is the one npm run docs writes from the registry", () => {
    const page = readFileSync(new URL('docs/output-files.md', ROOT), 'utf8');
    expect(page).toBe(withDocumentsTable(page));
    for (const d of DOCUMENTS) expect(page).toContain(`| ${d.version} | ${d.emittedBy} | [${d.module}]`);
  });

  it('a schema rejects a document that breaks it', () => {
    const good = { schemaVersion: 1, pythonPath: '/a', sitePath: '/b' };
    expect(documentProblems('gpumem.python-path', good)).toEqual([]);
    expect(documentProblems('gpumem.python-path', { ...good, schemaVersion: 2 })).not.toEqual([]);
    expect(documentProblems('gpumem.python-path', { schemaVersion: 1, pythonPath: '/a' })).toEqual(["/ must have required property 'sitePath'"]);
    expect(documentProblems('gpumem.python-path', { ...good, sitePath: null })).toEqual(['/sitePath must be string']);
    expect(() => documentEntry('gpumem.nothing')).toThrow(/no public document/);
  });
});
