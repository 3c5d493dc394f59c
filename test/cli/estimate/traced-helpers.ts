/** Running `gpumem estimate` on the traced fixture scripts (test/fixtures/estimate/trace) from the built CLI. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';

export const BIN = join(__dirname, '../../../dist/cli/bin.js');
export const SCRIPTS = join(__dirname, '../../fixtures/estimate/trace');
export const TIMEOUT_MS = 240_000;

export interface Traced {
  fixes: null | Array<{ kind: string; what: string; deviceBytes: number; fits: boolean; basis: string }>;
  peakRequestedBytes: number;
  peakPhase: string;
  steps: number;
  byCategory: Record<string, number>;
  byModule: Array<{ module: string; bytes: number }>;
  workspaceBytes: number;
  contextBytes: number;
  nvidiaSmiBytes: number;
  peakAllocatedBytes: number | null;
  peakReservedBytes: number | null;
  segmentCount: number | null;
  fit: { fits: boolean; budgetBytes: number } | null;
  command: string[];
  notes: string[];
  batchSearch: null | { maxBatch: number; exact: boolean; probes: Array<{ batch: number; deviceBytes: number; fits: boolean }> };
  seqSearch: null | { maxSeq: number; exact: boolean; multiple: number; batch: number; bytesPerToken: number | null; probes: Array<{ seq: number; deviceBytes: number; fits: boolean }> };
}

// Asynchronous, so a trace of many seconds does not block the test worker's event loop.
export function estimate(args: string[], cwd = SCRIPTS): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'estimate', '--no-color', ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export async function traced(args: string[]): Promise<Traced> {
  const r = await estimate(['--json', ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Traced;
}

