/**
 * Reading format versions 3 and 4 back: a keyframe sets the state, each delta line (delta-shape.ts) is applied to
 * the sample before it. The decoder keeps the rows as written (host facts by reference, nulls left out) to
 * apply paths to, and the samples it returned; a row or device a delta does not touch is the same object in
 * both samples, so a long recording costs memory for what changed, not for every row of every sample.
 * Touched items are checked like any recorded item (validate.ts) and named by their position.
 */
import type { Sample } from '../../core/types.js';
import { SHARED_VALUE_KEY, type ChangedFields } from './delta-shape.js';
import type { HostFactsDecoder } from './host-table.js';
import { deviceProblem, isObject, processProblem, sampleFieldsProblem } from './validate.js';

type Item = Record<string, unknown>;

/** The items as written (to apply the next delta to) beside the sample a reader was given. */
export interface DeltaState {
  fields: Item;
  devices: Item[];
  rows: Item[];
  sample: Sample;
}

/** A delta that cannot be applied: `what` names the field, e.g. "delta.processes.removed[2] …". */
export class DeltaProblem extends Error {}

const fail = (what: string): never => {
  throw new DeltaProblem(what);
};

/** Fields of a delta's body that are not sample fields. */
const ITEM_FIELDS: ReadonlySet<string> = new Set(['timeMs', 'devices', 'processes']);

const POSITION = /^(0|[1-9]\d*)$/;

function position(key: string, length: number, where: string): number {
  const at = POSITION.test(key) ? Number(key) : NaN;
  if (!(at < length)) fail(`${where} names position ${JSON.stringify(key)}, but there are ${length}`);
  return at;
}

function objectOf(value: unknown, where: string): Item {
  if (!isObject(value)) fail(`${where} must be an object`);
  return value as Item;
}

/** Applies `replaced` and `changed` to `items` in place (copying each touched item once), adding the positions to `touched`. */
function applyItemChanges(items: Item[], ops: Item, where: string, touched: Set<number>): void {
  if (ops.replaced !== undefined) {
    for (const [key, item] of Object.entries(objectOf(ops.replaced, `${where}.replaced`))) {
      const at = position(key, items.length, `${where}.replaced`);
      items[at] = objectOf(item, `${where}.replaced.${key}`);
      touched.add(at);
    }
  }
  if (ops.changed === undefined) return;
  for (const [key, byPosition] of Object.entries(objectOf(ops.changed, `${where}.changed`) as ChangedFields)) {
    const paths = key.split(',');
    const at = `${where}.changed.${key}`;
    const entries: [string, unknown][] = Array.isArray(byPosition)
      ? byPosition.map((v, i) => [String(i), v])
      : isObject(byPosition) && SHARED_VALUE_KEY in byPosition ? sharedEntries(byPosition, paths.length, items.length, at) : Object.entries(objectOf(byPosition, at));
    if (Array.isArray(byPosition) && byPosition.length !== items.length) fail(`${at} holds ${byPosition.length} values for ${items.length} items`);
    for (const [name, values] of entries) {
      const pos = position(name, items.length, at);
      if (paths.length > 1 && (!Array.isArray(values) || values.length !== paths.length)) fail(`${at}.${name} must be an array of ${paths.length} values, one per path`);
      // The item (and a nested object) is copied before it is written: the previous sample keeps its own.
      const item = touched.has(pos) ? items[pos]! : { ...items[pos]! };
      paths.forEach((path, i) => setPath(item, path, paths.length > 1 ? (values as unknown[])[i] : values, `${at} names a field of ${where.slice('delta.'.length)}[${pos}]`));
      items[pos] = item;
      touched.add(pos);
    }
  }
}

/**
 * A key whose object holds a shared value (`"value"`, with `"at"` or without it: every item the key does not
 * name by position) besides positions, as the positions' entries. One path only: several paths' values come
 * in arrays, one per position.
 */
function sharedEntries(change: Item, paths: number, length: number, where: string): [string, unknown][] {
  if (paths !== 1) fail(`${where} holds one value for ${paths} paths`);
  const entries: [string, unknown][] = [];
  const named = new Set<number>();
  for (const [name, value] of Object.entries(change)) {
    if (name === SHARED_VALUE_KEY || name === 'at') continue;
    if (!POSITION.test(name)) fail(`${where}.${name} is not part of a shared value (value, at, positions)`);
    named.add(position(name, length, where));
    entries.push([name, value]);
  }
  const value = change[SHARED_VALUE_KEY];
  if (change.at === undefined) {
    for (let i = 0; i < length; i++) if (!named.has(i)) entries.push([String(i), value]);
    return entries;
  }
  if (!Array.isArray(change.at)) fail(`${where}.at must be an array of positions`);
  let last = -1;
  for (const [i, pos] of (change.at as unknown[]).entries()) {
    if (!Number.isSafeInteger(pos) || (pos as number) <= last || (pos as number) >= length) fail(`${where}.at[${i}] must be a position (ascending, below ${length})`);
    if (named.has(pos as number)) fail(`${where}.at[${i}] names position ${pos as number}, which the key also gives a value of its own`);
    last = pos as number;
    entries.push([String(pos), value]);
  }
  return entries;
}

/** Sets `field` or `field.sub` of a (copied) item, copying the nested object it writes into. */
function setPath(item: Item, path: string, value: unknown, where: string): void {
  // Assigning `__proto__` would swap the item's prototype, not set a field.
  if (path.split('.').includes('__proto__')) fail(`${where}: __proto__ is not a field`);
  const dot = path.indexOf('.');
  if (dot < 0) {
    item[path] = value;
    return;
  }
  const field = path.slice(0, dot);
  const nested = item[field];
  if (!isObject(nested)) fail(`${where}.${field}, which is not an object`);
  item[field] = { ...(nested as Item), [path.slice(dot + 1)]: value };
}

type Rows = { rows: Item[]; decoded: Sample['processes'] };

/**
 * Applies `removed` then `added` to the rows and their decoded twins, in one pass each (a recording may
 * list hundreds of thousands of rows), returning new arrays; added positions go into `touched`.
 */
function applyRowMembership({ rows, decoded }: Rows, ops: Item, touched: Set<number>): Rows {
  if (ops.removed !== undefined) {
    const removed = ops.removed;
    if (!Array.isArray(removed)) fail('delta.processes.removed must be an array of positions');
    let last = -1;
    for (const [i, at] of (removed as unknown[]).entries()) {
      if (!Number.isSafeInteger(at) || (at as number) <= last || (at as number) >= rows.length) {
        fail(`delta.processes.removed[${i}] must be a position in the sample before (ascending, below ${rows.length})`);
      }
      last = at as number;
    }
    const gone = new Set(removed as number[]);
    const keep = (_: unknown, i: number): boolean => !gone.has(i);
    rows = rows.filter(keep);
    decoded = decoded.filter(keep);
  }
  if (ops.added === undefined) return { rows, decoded };
  // Integer keys iterate in ascending order, so the new rows merge with the kept ones in one pass.
  const added = Object.entries(objectOf(ops.added, 'delta.processes.added'));
  const total = rows.length + added.length;
  const outRows: Item[] = new Array<Item>(total);
  const outDecoded: Sample['processes'] = new Array<Sample['processes'][number]>(total);
  let kept = 0;
  let next = 0;
  let at = added.length > 0 ? position(added[0]![0], total, 'delta.processes.added') : -1;
  for (let i = 0; i < total; i++) {
    if (i === at) {
      outRows[i] = objectOf(added[next]![1], `delta.processes.added.${added[next]![0]}`);
      touched.add(i);
      next++;
      at = next < added.length ? position(added[next]![0], total, 'delta.processes.added') : -1;
    } else {
      outRows[i] = rows[kept]!;
      outDecoded[i] = decoded[kept]!;
      kept++;
    }
  }
  return { rows: outRows, decoded: outDecoded };
}

const ROW_OPS: ReadonlySet<string> = new Set(['removed', 'added', 'replaced', 'changed']);
const DEVICE_OPS: ReadonlySet<string> = new Set(['replaced', 'changed']);

function checkOps(ops: Item, known: ReadonlySet<string>, where: string): void {
  for (const name of Object.keys(ops)) if (!known.has(name)) fail(`${where}.${name} is not a change this gpumem knows (${[...known].join(', ')})`);
}

/**
 * Applies one delta body to `state`, returning the new state (whose `sample` is the reconstructed sample,
 * checked). Throws DeltaProblem naming the field when the delta does not fit the sample before it.
 */
export function applyDelta(state: DeltaState, body: Item, hosts: HostFactsDecoder): DeltaState {
  if (typeof body.timeMs !== 'number' || !Number.isFinite(body.timeMs)) fail('delta has no numeric timeMs');
  const fields: Item = { ...state.fields };
  for (const [name, value] of Object.entries(body)) {
    if (name === '__proto__') fail('delta.__proto__ is not a sample field');
    if (!ITEM_FIELDS.has(name)) fields[name] = value;
  }

  let devices = state.devices;
  let decodedDevices = state.sample.devices;
  if (body.devices !== undefined) {
    const ops = objectOf(body.devices, 'delta.devices');
    checkOps(ops, DEVICE_OPS, 'delta.devices');
    const touched = new Set<number>();
    devices = devices.slice();
    applyItemChanges(devices, ops, 'delta.devices', touched);
    decodedDevices = decodedDevices.slice();
    for (const at of touched) {
      const problem = deviceProblem(devices[at]!, `devices[${at}]`);
      if (problem) fail(`sample field ${problem}`);
      decodedDevices[at] = devices[at] as unknown as Sample['devices'][number];
    }
  }

  let rows = state.rows;
  let decodedRows = state.sample.processes;
  if (body.processes !== undefined) {
    const ops = objectOf(body.processes, 'delta.processes');
    checkOps(ops, ROW_OPS, 'delta.processes');
    const touched = new Set<number>();
    ({ rows, decoded: decodedRows } = ops.removed === undefined && ops.added === undefined
      ? { rows: rows.slice(), decoded: decodedRows.slice() }
      : applyRowMembership({ rows, decoded: decodedRows }, ops, touched));
    applyItemChanges(rows, ops, 'delta.processes', touched);
    for (const at of touched) {
      const row: Item = { ...rows[at]! };
      const problem = hosts.resolveRow(row, `processes[${at}]`) ?? processProblem(row, `processes[${at}]`);
      if (problem) fail(`sample field ${problem}`);
      decodedRows[at] = row as unknown as Sample['processes'][number];
    }
  }

  const sample = { ...fields, timeMs: body.timeMs, devices: decodedDevices, processes: decodedRows } as Item;
  const problem = sampleFieldsProblem(sample);
  if (problem) fail(`sample field ${problem}`);
  return { fields, devices, rows, sample: sample as unknown as Sample };
}

/** The state a keyframe sets: `line` as written, `sample` its checked reading (rows copied before host facts went in). */
export function keyframeState(line: Item, sample: Sample): DeltaState {
  const fields: Item = {};
  for (const [name, value] of Object.entries(line)) if (!ITEM_FIELDS.has(name)) fields[name] = value;
  return { fields, devices: line.devices as Item[], rows: line.processes as Item[], sample };
}
