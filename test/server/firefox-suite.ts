/**
 * One headless Firefox and one server harness for a test file: started before its tests (failing, never skipping,
 * when Debian's firefox-esr is missing) and closed after them.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { FIREFOX } from '../setup/chromium.js';
import { Firefox } from './firefox-bidi.js';
import { startHarness, type Harness, type HarnessOptions } from './harness.js';

export interface FirefoxSuite {
  /** The harness and the browser; read them inside a test, once beforeAll has run. */
  readonly h: Harness;
  readonly ff: Firefox;
}

export function firefoxSuite(options: HarnessOptions, events: string[] = []): FirefoxSuite {
  let h: Harness | undefined;
  let ff: Firefox | undefined;
  beforeAll(async () => {
    if (!existsSync(FIREFOX)) throw new Error(`${FIREFOX} is missing; install it with: sudo apt-get install -y firefox-esr`);
    h = await startHarness(options);
    ff = await Firefox.launch(15_000);
    if (events.length > 0) await ff.send('session.subscribe', { events });
  }, 30_000);
  afterAll(async () => {
    await ff?.close();
    await h?.close();
  });
  return {
    get h() {
      return h!;
    },
    get ff() {
      return ff!;
    },
  };
}
