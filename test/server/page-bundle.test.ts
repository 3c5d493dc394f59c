/**
 * The page's script is TypeScript (src/server/page/) bundled by esbuild: the result is one classic script
 * (index.html loads it with `defer`, not as a module), and the built package ships the current one.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { bundlePage } from '../../src/server/page-bundle.js';
import { BIN } from '../helpers/cli.js';

const ENTRY = fileURLToPath(new URL('../../src/server/page/app.ts', import.meta.url));

describe('the page bundle', () => {
  it('is one classic script with no module syntax and no TypeScript left in it', () => {
    const code = bundlePage(ENTRY);
    expect(() => new Script(code)).not.toThrow();
    expect(code).not.toMatch(/^\s*(import|export)\s/m);
    // The page's own code is in it, with the strings it shows.
    expect(code).toContain('/api/v1/events');
    expect(code).toContain('no runs recorded yet');
  });

  it('is what the build put beside the compiled server', () => {
    // The built executable's package: dist/cli/bin.js and dist/server/assets/app.js.
    const built = readFileSync(join(dirname(BIN), '../server/assets/app.js'), 'utf8');
    expect(built).toBe(bundlePage(ENTRY));
  });
});
