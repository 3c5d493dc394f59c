/**
 * The `--json` shape of an event (schemaVersion 1, documented in docs/explain.md). Byte counts become JSON
 * numbers, or decimal strings above 2^53 − 1 where a number would lose digits.
 */
import type { Cause, OomEvent } from './types.js';

export const OOM_SCHEMA_VERSION = 1;

/** A bigint as a JSON-safe value: a number when exact, else its decimal string. */
export function jsonBytes(value: bigint | null): number | string | null {
  if (value === null) return null;
  return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

function jsonValue(value: unknown): unknown {
  if (typeof value === 'bigint') return jsonBytes(value);
  if (Array.isArray(value)) return value.map(jsonValue);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, jsonValue(v)]));
  }
  return value;
}

/** One event with its causes as a plain JSON object (bigints converted, field order stable). */
export function eventToJson(event: OomEvent, causes: readonly Cause[], file?: string | null): Record<string, unknown> {
  return jsonValue({
    file: file ?? null,
    line: event.line,
    lines: event.lines,
    ranks: event.ranks,
    family: event.family,
    framework: event.framework,
    exceptionClass: event.exceptionClass,
    era: event.era,
    gpuIndex: event.gpuIndex,
    requestedBytes: event.requestedBytes,
    totalBytes: event.totalBytes,
    freeBytes: event.freeBytes,
    processInUseBytes: event.processInUseBytes,
    allocatedByPytorchBytes: event.allocatedByPytorchBytes,
    reservedUnallocatedBytes: event.reservedUnallocatedBytes,
    reservedTotalBytes: event.reservedTotalBytes,
    allowedBytes: event.allowedBytes,
    privatePoolBytes: event.privatePoolBytes,
    otherProcesses: event.otherProcesses,
    requestMoreThan1EB: event.requestMoreThan1EB,
    unavailable: event.unavailable,
    mps: event.mps,
    tensor: event.tensor,
    kvCache: event.kvCache,
    poolBytes: event.poolBytes,
    backend: event.backend,
    partial: event.partial,
    hintVariable: event.hintVariable,
    userFrame: event.userFrame,
    message: event.message,
    causes: causes.map((c) => ({ id: c.id, score: c.score, title: c.title, evidence: c.evidence, detail: c.detail, fix: c.fix })),
  }) as Record<string, unknown>;
}
