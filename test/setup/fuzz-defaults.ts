/** Per test file: property tests that name no count use the CI/local default (see test/helpers/fuzz.ts). */
import fc from 'fast-check';
import { runs } from '../helpers/fuzz.js';

fc.configureGlobal({ numRuns: runs(100) });
