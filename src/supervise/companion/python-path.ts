/** Where the Python companion ships inside the gpumem package, found relative to this module. */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { GpumemError } from '../../core/errors.js';

// src/supervise/companion/ and dist/supervise/companion/ are both three levels below the package root.
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function checked(path: string, what: string): string {
  if (!existsSync(path)) {
    throw new GpumemError('FAILED', `the Python companion's ${what} is missing: ${path}`, {
      hint: 'reinstall gpumem; the npm package ships the python/ folder',
    });
  }
  return path;
}

/**
 * The folder to put on PYTHONPATH for `import gpumem_torch` (the explicit API). Throws FAILED when the
 * package was installed without its python/ folder.
 */
export function companionPythonDir(): string {
  return checked(fileURLToPath(new URL('python', `file://${PACKAGE_ROOT}`)), 'folder');
}

/**
 * The folder holding gpumem's sitecustomize.py, which `gpumem run` puts first on the child's PYTHONPATH:
 * it starts the companion after `import torch` and then runs the user's own sitecustomize.
 */
export function companionSiteDir(): string {
  return checked(fileURLToPath(new URL('python/_site', `file://${PACKAGE_ROOT}`)), 'sitecustomize folder');
}

/** PYTHONPATH with `dir` first and the user's entries after it, unchanged and in order. */
export function prependPythonPath(dir: string, existing: string | undefined): string {
  const rest = (existing ?? '').split(':').filter((p) => p !== '' && p !== dir);
  return [dir, ...rest].join(':');
}
