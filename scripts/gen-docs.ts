/** Writes docs/cli.md from the options table. `npm run docs`; a test fails when the file is stale. */
import { writeFileSync } from 'node:fs';
import { docsMarkdown } from '../src/cli/help.js';

writeFileSync(new URL('../docs/cli.md', import.meta.url), docsMarkdown());
