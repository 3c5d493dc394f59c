/**
 * Deep shape check of a recorded sample. Every reader (status, diagnose, doctor) trusts the Sample types, so a
 * hand-edited or foreign recording must be refused here with the field named, not crash a renderer later.
 * Nullable fields that are absent read as null (the model's "unknown"); anything present must have its type.
 */

/** A field's expected value: a primitive kind, or the allowed strings of an enumeration. */
type Kind = 'int' | 'num' | 'bytes' | 'time' | 'str' | 'bool' | 'strs' | 'ints' | 'strMap' | readonly string[];
interface Field {
  kind: Kind;
  nullable: boolean;
}
type Schema = Record<string, Field>;

const req = (kind: Kind): Field => ({ kind, nullable: false });
const opt = (kind: Kind): Field => ({ kind, nullable: true });

/** Date can print ±8.64e15 ms; a time outside that range cannot be shown and is not a real reading. */
const MAX_TIME_MS = 8.64e15;

/** True for a number of ms since the epoch that Date can represent. */
export function isTimeMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_TIME_MS;
}

function matches(value: unknown, kind: Kind): boolean {
  if (Array.isArray(kind)) return typeof value === 'string' && kind.includes(value);
  switch (kind) {
    case 'int':
      return Number.isSafeInteger(value);
    case 'num':
      return typeof value === 'number' && Number.isFinite(value);
    case 'bytes':
      return Number.isSafeInteger(value) && (value as number) >= 0;
    case 'time':
      return isTimeMs(value);
    case 'str':
      return typeof value === 'string';
    case 'bool':
      return typeof value === 'boolean';
    case 'strs':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'ints':
      return Array.isArray(value) && value.every((v) => Number.isSafeInteger(v));
    case 'strMap':
      return isObject(value) && Object.values(value).every((v) => typeof v === 'string');
    default:
      return false;
  }
}

const describeKind = (kind: Kind): string =>
  Array.isArray(kind)
    ? `one of ${kind.join(', ')}`
    : ({ int: 'an integer', num: 'a number', bytes: 'a whole byte count ≥ 0', time: 'a time in ms since the epoch', str: 'a string', bool: 'true or false', strs: 'an array of strings', ints: 'an array of integers', strMap: 'an object of strings' } as const)[kind as Exclude<Kind, readonly string[]>];

/** True for a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Checks `obj` against `schema`, filling absent nullable fields with null (and, for the model's objects that
 * carry one, an absent `unavailable` with {}). Returns the first problem as "WHERE.FIELD must be …", or null when the object fits.
 */
function checkFields(obj: Record<string, unknown>, schema: Schema, where: string, hasUnavailable = true): string | null {
  for (const [name, field] of Object.entries(schema)) {
    if (obj[name] === undefined && field.nullable) obj[name] = null;
    const value = obj[name];
    if (value === null && field.nullable) continue;
    if (!matches(value, field.kind)) return `${where}.${name} must be ${describeKind(field.kind)}${field.nullable ? ' or null' : ''}`;
  }
  if (!hasUnavailable) return null;
  obj.unavailable ??= {};
  return matches(obj.unavailable, 'strMap') ? null : `${where}.unavailable must be an object of strings`;
}

const MEMORY: Schema = { totalBytes: opt('bytes'), reservedBytes: opt('bytes'), usedBytes: opt('bytes'), freeBytes: opt('bytes') };
const UTILIZATION: Schema = { gpuPct: opt('num'), memoryPct: opt('num') };
const CLOCKS: Schema = { smMhz: opt('num'), memoryMhz: opt('num') };
const MIG: Schema = { gpuInstanceId: req('int'), computeInstanceId: opt('int'), uuid: opt('str'), profile: opt('str') };
const DEVICE: Schema = {
  index: req('int'), uuid: opt('str'), name: opt('str'), pciBusId: opt('str'), minorNumber: opt('int'),
  status: req(['ok', 'lost', 'no-permission', 'error']), temperatureC: opt('num'), powerDrawMw: opt('num'),
  powerLimitMw: opt('num'), computeMode: opt('str'), migMode: opt(['enabled', 'disabled']), driverVersion: opt('str'),
  cudaDriverVersion: opt('str'),
};
/** Device fields absent from recordings made before gpumem read them: checked only when present. */
const LATER_DEVICE: Schema = { totalEnergyMj: opt('num') };
const PROCESS: Schema = {
  pid: req('int'), gpuUuid: opt('str'), gpuIndex: opt('int'), gpuInstanceId: opt('int'), computeInstanceId: opt('int'),
  usedBytes: opt('bytes'), kind: req(['compute', 'graphics', 'compute+graphics']), name: opt('str'), smUtilPct: opt('num'),
};
/** Process-row fields a reader fills with null when absent, so a writer may leave their nulls out. */
export const NULLABLE_PROCESS_FIELDS: ReadonlySet<string> = new Set(Object.entries(PROCESS).filter(([, f]) => f.nullable).map(([name]) => name));

const HOST: Schema = {
  visible: req('bool'), uid: opt('int'), user: opt('str'), ppid: opt('int'), cmdline: opt('strs'), exe: opt('str'),
  startTimeMs: opt('time'), startTicks: opt('num'), state: opt(['R', 'S', 'D', 'Z', 'T', 't', 'X', 'I', 'W', 'P', 'K']),
  containerId: opt('str'), nspid: opt('ints'), cudaEnv: opt('strMap'),
};

/**
 * Host facts a source leaves out when it does not read them (CPU time and RSS: live samplers; the job: since
 * gpumem read it): checked only when present, since absent and null say different things there.
 */
const LATER_HOST: Schema = { cpuTicks: opt('num'), cpuTicksAtMs: req('time'), cpuPct: opt('num'), rssBytes: opt('bytes') };
const JOB: Schema = { slurmJobId: opt('str'), podUid: opt('str'), podName: opt('str'), podNamespace: opt('str'), runMark: opt('str') };

function laterHostProblem(host: Record<string, unknown>, where: string): string | null {
  const present = Object.fromEntries(Object.entries(LATER_HOST).filter(([name]) => host[name] !== undefined));
  const problem = checkFields(host, present, `${where}.host`, false);
  if (problem || host.job === undefined || host.job === null) return problem;
  return checkNested(host, 'job', JOB, `${where}.host`, false);
}

/** Checks a nested object field: present, an object, and fitting its schema. */
function checkNested(parent: Record<string, unknown>, name: string, schema: Schema, where: string, hasUnavailable = true): string | null {
  const value = parent[name];
  if (!isObject(value)) return `${where}.${name} must be an object`;
  return checkFields(value, schema, `${where}.${name}`, hasUnavailable);
}

/** Checks one device of a sample in place (filling absent nullable fields); `where` names it, e.g. "devices[0]". */
export function deviceProblem(d: Record<string, unknown>, where: string): string | null {
  d.migInstances ??= [];
  if (!Array.isArray(d.migInstances)) return `${where}.migInstances must be an array`;
  const problem = checkFields(d, DEVICE, where) ?? checkNested(d, 'memory', MEMORY, where, false) ?? checkNested(d, 'utilization', UTILIZATION, where, false)
    // Clocks are absent from recordings made before gpumem read them.
    ?? (d.clocks === undefined ? null : checkNested(d, 'clocks', CLOCKS, where, false))
    ?? (d.totalEnergyMj === undefined ? null : checkFields({ totalEnergyMj: d.totalEnergyMj }, LATER_DEVICE, where, false));
  if (problem) return problem;
  for (const [j, m] of (d.migInstances as unknown[]).entries()) {
    if (!isObject(m)) return `${where}.migInstances[${j}] must be an object`;
    const migProblem = checkFields(m, MIG, `${where}.migInstances[${j}]`) ?? checkNested(m, 'memory', MEMORY, `${where}.migInstances[${j}]`, false);
    if (migProblem) return migProblem;
  }
  return null;
}

/** Checks one process row in place (host facts already resolved); `where` names it, e.g. "processes[3]". */
export function processProblem(p: Record<string, unknown>, where: string): string | null {
  p.host ??= null;
  return checkFields(p, PROCESS, where) ?? (p.host === null ? null : checkNested(p, 'host', HOST, where) ?? laterHostProblem(p.host as Record<string, unknown>, where));
}

/** Checks the sample's own fields in place (time and its `unavailable` map). */
export function sampleFieldsProblem(s: Record<string, unknown>): string | null {
  if (!matches(s.timeMs, 'time')) return 'timeMs must be a time in ms since the epoch';
  s.unavailable ??= {};
  return matches(s.unavailable, 'strMap') ? null : 'unavailable must be an object of strings';
}

/**
 * Checks a parsed sample line in place (filling absent nullable fields with null) and returns the first
 * problem, naming the field (e.g. "devices[0].utilization.gpuPct must be a number or null"), or null.
 */
export function sampleProblem(s: Record<string, unknown>): string | null {
  const own = sampleFieldsProblem(s);
  if (own) return own;
  for (const [i, d] of (s.devices as Record<string, unknown>[]).entries()) {
    const problem = deviceProblem(d, `devices[${i}]`);
    if (problem) return problem;
  }
  for (const [i, p] of (s.processes as Record<string, unknown>[]).entries()) {
    const problem = processProblem(p, `processes[${i}]`);
    if (problem) return problem;
  }
  return null;
}
