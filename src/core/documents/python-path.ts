/** `gpumem python-path --json`: where the companion package and its sitecustomize live (docs/companion.md). */
import { string, versioned, type DocumentEntry } from './schema.js';

export const PYTHON_PATH_SCHEMA_VERSION = 1;
export const PYTHON_PATH_KIND = 'gpumem.python-path';

export interface PythonPathDoc {
  schemaVersion: typeof PYTHON_PATH_SCHEMA_VERSION;
  pythonPath: string;
  sitePath: string;
}

/** Builds the document from the two folders. */
export function pythonPathDocument(pythonPath: string, sitePath: string): PythonPathDoc {
  return { schemaVersion: PYTHON_PATH_SCHEMA_VERSION, pythonPath, sitePath };
}

export const pythonPathSchema = versioned(PYTHON_PATH_SCHEMA_VERSION, null, { pythonPath: string, sitePath: string });

export const pythonPathEntry: DocumentEntry = {
  kind: PYTHON_PATH_KIND, kindInDocument: null, version: PYTHON_PATH_SCHEMA_VERSION,
  emittedBy: 'python-path --json', doc: 'docs/cli.md', module: 'src/core/documents/python-path.ts', schema: pythonPathSchema,
};
