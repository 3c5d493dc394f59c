/** The suite's second user is removed again by the file that created it, so runs leave no system user behind. */
import { describe, expect, it } from 'vitest';
import { lookupUser, secondUser } from './harness.js';

const root = process.getuid?.() === 0;
describe.skipIf(!root)(`second user teardown${root ? '' : ' (skipped: needs root to create a user)'}`, () => {
  it('the user made for a file exists while it runs and is gone after remove()', () => {
    const made = secondUser();
    expect(made.user).not.toBeNull();
    expect(lookupUser(made.user!.name)).not.toBeNull();
    made.remove();
    expect(lookupUser(made.user!.name)).toBeNull();
  });
});
