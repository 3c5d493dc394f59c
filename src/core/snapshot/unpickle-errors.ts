/**
 * Every error the unpickler raises, written in one place. Each names what was wrong and the byte offset;
 * refused object opcodes are INPUT_UNSAFE, damaged data INPUT_MALFORMED, oversized data INPUT_TOO_LARGE.
 */
import { GpumemError } from '../errors.js';
import { opcodeName, TEXT_OPCODES, UNSAFE_OPCODES } from './opcodes.js';
import { MiB } from '../units.js';

/** Damaged or foreign data at `offset`. */
export function malformedAt(message: string, offset: number): GpumemError {
  return new GpumemError('INPUT_MALFORMED', message, {
    hint: 'the file is not a valid PyTorch memory snapshot (damaged, truncated or another format)',
    details: { offset },
  });
}

/** An opcode the reader does not run: object-building ones are unsafe, the rest unsupported or not opcodes. */
export function refuseOpcode(op: number, offset: number): GpumemError {
  const unsafe = UNSAFE_OPCODES.get(op);
  if (unsafe) {
    return new GpumemError('INPUT_UNSAFE', `refusing pickle opcode ${unsafe} at byte ${offset}: it imports or calls Python objects, and a memory snapshot holds only data`, {
      hint: 'this file is not a plain PyTorch memory snapshot and may be an attempt to run code; gpumem never executes pickles',
      details: { opcode: unsafe, offset },
    });
  }
  const text = TEXT_OPCODES.get(op);
  return malformedAt(
    text ? `pickle opcode ${text} at byte ${offset} belongs to protocols 0–1, which gpumem does not read` : `byte 0x${op.toString(16).padStart(2, '0')} at offset ${offset} is not a pickle opcode`,
    offset,
  );
}

/** An opcode that needs more values than the stack holds. */
export function underflow(op: number, offset: number): GpumemError {
  return malformedAt(`${opcodeName(op)} at byte ${offset} needs more values than the stack holds`, offset);
}

/** An opcode applied to the wrong kind of value (APPENDS to a dict, SETITEMS to a list…). */
export function wrongTarget(op: number, offset: number, what: string): GpumemError {
  return malformedAt(`${opcodeName(op)} at byte ${offset} does not apply to ${what}`, offset);
}

/** A declared length that cannot be true or cannot be held. */
export function badLength(name: string, n: number, offset: number, why: string): GpumemError {
  const declared = Number.isFinite(n) ? String(n) : 'more than 2^53';
  return new GpumemError('INPUT_MALFORMED', `${name} at byte ${offset} declares ${declared} bytes, ${why}`, {
    hint: 'the file is truncated or crafted; a real snapshot never declares more data than it holds',
    details: { offset, declaredBytes: Number.isFinite(n) ? n : null },
  });
}

/** MARK nesting beyond the limit. */
export function nestedTooDeep(maxDepth: number, offset: number): GpumemError {
  return new GpumemError('INPUT_UNSAFE', `the pickle nests deeper than ${maxDepth} levels at byte ${offset}`, {
    hint: 'PyTorch snapshots nest fewer than 10 levels; this file was crafted or is corrupt',
    details: { offset },
  });
}

/** A container or the stack beyond the item limit. */
export function tooMany(what: string, maxItems: number, offset: number): GpumemError {
  return new GpumemError('INPUT_TOO_LARGE', `${what} grows past ${maxItems} items at byte ${offset}`, { details: { offset } });
}

/** The estimated memory of what was built went over the budget. */
export function overBudget(maxHeapBytes: number, offset: number): GpumemError {
  return new GpumemError('INPUT_TOO_LARGE', `the pickle would need more than ${Math.round(maxHeapBytes / MiB)} MiB of memory (at byte ${offset})`, {
    hint: 'the file expands far beyond its size (a pickle bomb?); real snapshots need a few times their size in memory',
    details: { offset, maxHeapBytes },
  });
}
