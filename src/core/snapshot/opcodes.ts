/**
 * Pickle opcodes, by byte. Only the data opcodes are executed by the unpickler; every opcode that names a
 * Python object (a module global, an extension code, a persistent id, an out-of-band buffer) or calls one is
 * listed in UNSAFE_OPCODES and refused, which is what makes reading an untrusted snapshot safe.
 */

export const OP = {
  MARK: 0x28,
  STOP: 0x2e,
  POP: 0x30,
  POP_MARK: 0x31,
  DUP: 0x32,
  BINBYTES: 0x42,
  SHORT_BINBYTES: 0x43,
  BINFLOAT: 0x47,
  BININT: 0x4a,
  BININT1: 0x4b,
  BININT2: 0x4d,
  NONE: 0x4e,
  BINSTRING: 0x54,
  SHORT_BINSTRING: 0x55,
  BINUNICODE: 0x58,
  EMPTY_LIST: 0x5d,
  APPEND: 0x61,
  DICT: 0x64,
  APPENDS: 0x65,
  BINGET: 0x68,
  LONG_BINGET: 0x6a,
  LIST: 0x6c,
  BINPUT: 0x71,
  LONG_BINPUT: 0x72,
  SETITEM: 0x73,
  TUPLE: 0x74,
  EMPTY_TUPLE: 0x29,
  SETITEMS: 0x75,
  EMPTY_DICT: 0x7d,
  PROTO: 0x80,
  TUPLE1: 0x85,
  TUPLE2: 0x86,
  TUPLE3: 0x87,
  NEWTRUE: 0x88,
  NEWFALSE: 0x89,
  LONG1: 0x8a,
  LONG4: 0x8b,
  SHORT_BINUNICODE: 0x8c,
  BINUNICODE8: 0x8d,
  BINBYTES8: 0x8e,
  EMPTY_SET: 0x8f,
  ADDITEMS: 0x90,
  FROZENSET: 0x91,
  MEMOIZE: 0x94,
  FRAME: 0x95,
  BYTEARRAY8: 0x96,
} as const;

/** Opcodes that import, look up or call Python objects. Reading one is refused, never executed. */
export const UNSAFE_OPCODES: ReadonlyMap<number, string> = new Map([
  [0x63, 'GLOBAL'],
  [0x93, 'STACK_GLOBAL'],
  [0x52, 'REDUCE'],
  [0x62, 'BUILD'],
  [0x69, 'INST'],
  [0x6f, 'OBJ'],
  [0x81, 'NEWOBJ'],
  [0x92, 'NEWOBJ_EX'],
  [0x82, 'EXT1'],
  [0x83, 'EXT2'],
  [0x84, 'EXT4'],
  [0x50, 'PERSID'],
  [0x51, 'BINPERSID'],
  [0x97, 'NEXT_BUFFER'],
  [0x98, 'READONLY_BUFFER'],
]);

/**
 * Text opcodes of protocols 0 and 1. They carry plain data, but no writer of PyTorch snapshots (protocol 2
 * or later) emits them, so they are refused as unsupported rather than parsed.
 */
export const TEXT_OPCODES: ReadonlyMap<number, string> = new Map([
  [0x46, 'FLOAT'],
  [0x49, 'INT'],
  [0x4c, 'LONG'],
  [0x53, 'STRING'],
  [0x56, 'UNICODE'],
  [0x67, 'GET'],
  [0x70, 'PUT'],
]);

const NAMES = new Map<number, string>([
  ...Object.entries(OP).map(([name, code]) => [code, name] as [number, string]),
  ...UNSAFE_OPCODES,
  ...TEXT_OPCODES,
]);

/** The pickle name of an opcode byte, or its hex value when the byte is not an opcode at all. */
export function opcodeName(code: number): string {
  return NAMES.get(code) ?? `unknown opcode 0x${code.toString(16).padStart(2, '0')}`;
}
