/**
 * Writes the generated docs: docs/cli.md from the options table, docs/serve.openapi.json from the server's route
 * table and the document schemas, and the documents table of docs/output-files.md from the document registry.
 * `npm run docs`; a test fails when a committed file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { docsMarkdown } from '../src/cli/help.js';
import { withDocumentsTable } from '../src/server/documents/markdown.js';
import { openApiText } from '../src/server/openapi.js';

const outputFiles = new URL('../docs/output-files.md', import.meta.url);
writeFileSync(new URL('../docs/cli.md', import.meta.url), docsMarkdown());
writeFileSync(new URL('../docs/serve.openapi.json', import.meta.url), openApiText());
writeFileSync(outputFiles, withDocumentsTable(readFileSync(outputFiles, 'utf8')));
