/**
 * The one error type of gpumem. Every failure a user can cause or meet carries a stable `code`, a one-line
 * `message` (what and where), a `hint` (what to do) and optionally the underlying `cause`. The CLI prints
 * known errors as two lines and decides the exit status from `code` alone (cli/exit-codes.ts).
 */

/**
 * Error codes by class. The class decides the exit status: `usage` → 2, `input` → 2, `no-gpu` → 3,
 * `failure` → 1. Add a code here, never a new error class.
 */
export const ERROR_CODES = {
  // The command line itself is wrong.
  USAGE: 'usage',
  UNKNOWN_COMMAND: 'usage',
  UNKNOWN_OPTION: 'usage',
  BAD_OPTION_VALUE: 'usage',
  // A file or text the user gave us is wrong.
  INPUT_NOT_FOUND: 'input',
  INPUT_UNREADABLE: 'input',
  INPUT_MALFORMED: 'input',
  INPUT_TOO_LARGE: 'input',
  INPUT_UNSAFE: 'input',
  // The GPU cannot be reached at all.
  NO_GPU_ACCESS: 'no-gpu',
  NVML_ERROR: 'no-gpu',
  SMI_ERROR: 'no-gpu',
  // Something we tried to do did not work.
  FAILED: 'failure',
  CHILD_FAILED: 'failure',
  // A program to run could not be started: exit 127 (not found) or 126 (not executable), as in a shell.
  PROGRAM_NOT_FOUND: 'failure',
  PROGRAM_NOT_EXECUTABLE: 'failure',
  PROCESS_CHANGED: 'failure',
  NOT_PERMITTED: 'failure',
  TIMEOUT: 'failure',
  STORE_ERROR: 'failure',
  PREFLIGHT_FAILED: 'failure',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorClass = (typeof ERROR_CODES)[ErrorCode];

export interface GpumemErrorOptions {
  hint?: string;
  cause?: unknown;
  /** Extra machine-readable facts (file, line, offset…) kept for --json error output. */
  details?: Record<string, unknown>;
}

export class GpumemError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: GpumemErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GpumemError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  get errorClass(): ErrorClass {
    return ERROR_CODES[this.code];
  }
}

/** True for errors gpumem raised on purpose (as opposed to bugs). */
export function isGpumemError(value: unknown): value is GpumemError {
  return value instanceof GpumemError;
}
