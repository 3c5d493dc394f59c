/**
 * Writes the generated docs: docs/cli.md from the options table, docs/serve.openapi.json from the server's route
 * table and the document schemas. `npm run docs`; a test fails when either committed file is stale.
 */
import { writeFileSync } from 'node:fs';
import { docsMarkdown } from '../src/cli/help.js';
import { openApiText } from '../src/server/openapi.js';

writeFileSync(new URL('../docs/cli.md', import.meta.url), docsMarkdown());
writeFileSync(new URL('../docs/serve.openapi.json', import.meta.url), openApiText());
