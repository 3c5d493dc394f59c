/** store/: run history (SQLite) and recordings (NDJSON). Imports core/ and sources/. */
export * from './db/index.js';
export * from './recording/index.js';
export * from './live/index.js';
export { runFolderPath, createRunFolder } from './run-folder.js';
export { writeNewFile, createNewFile, type NewFileLabel, type NewFileHooks } from './new-file.js';
