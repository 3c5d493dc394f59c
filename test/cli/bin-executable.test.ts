import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';

// `npx gpumem` in a checkout runs dist/cli/bin.js itself (through its #! line), so a build that leaves the file
// without its executable bit breaks the quick start after `npm test` rebuilt dist/.
describe('the built command', () => {
  it('is executable and runs through its own #! line', () => {
    expect(statSync(BIN).mode & 0o111).toBe(0o111);
    const version = execFileSync(BIN, ['--version'], { encoding: 'utf8' });
    expect(version).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});
