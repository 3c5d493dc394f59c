/**
 * The fake driver's call counters (fake_costs.c), read two ways: from the JSON file a child process leaves at
 * GPUMEM_FAKE_NVML_CALLS_OUT (written when its NVML session ends and at exit), or, in this process, straight
 * from the loaded library (koffi hands back the same library gpumem's NVML source loaded, so the counters are
 * the ones its calls moved).
 */
import { readFileSync } from 'node:fs';
import koffi from 'koffi';

export interface FakeCall {
  count: number;
  /** What the cost table charges per call (0 when the function has no entry). */
  costNs: number;
  /** Thread CPU time the fake actually spent in this function's calls (0 with costs off). */
  spentNs: number;
}

export interface FakeCalls {
  /** The cost table in force: GPUMEM_FAKE_NVML_COSTS=h100, or "off". */
  costs: 'h100' | 'off';
  calls: Record<string, FakeCall>;
  /**
   * The fake's own work on the calling thread (re-reading a changed scenario, appending to the calls log): how
   * often and its CPU; its checks of the scenario file before each call (`checks`, their time `checkNs`); how
   * much of both the charged calls absorbed (`creditedNs`) and how much the next ones will (`pendingNs`):
   * creditedNs + pendingNs = spentNs + checkNs (fake_costs.c, fake_own_work and fake_own_check).
   */
  own: { count: number; spentNs: number; checks: number; checkNs: number; creditedNs: number; pendingNs: number };
}

/** The counters a child process wrote to its GPUMEM_FAKE_NVML_CALLS_OUT file. */
export function readCallsFile(path: string): FakeCalls {
  return JSON.parse(readFileSync(path, 'utf8')) as FakeCalls;
}

/** Function name → call count, the shape tests compare with `toEqual`. */
export function countsOf(calls: FakeCalls): Record<string, number> {
  return Object.fromEntries(Object.entries(calls.calls).map(([fn, c]) => [fn, c.count]));
}

export interface CallCounter {
  read(): FakeCalls;
  reset(): void;
}

/** The counters of the fake library at `libPath` as loaded in this process. */
export function fakeCallCounter(libPath: string): CallCounter {
  const lib = koffi.load(libPath);
  const json = lib.func('fakeNvmlCallsJson', 'int', ['void *', 'uint']) as (out: Buffer | null, len: number) => number;
  const reset = lib.func('fakeNvmlCallsReset', 'void', []) as () => void;
  return {
    read() {
      const need = json(null, 0);
      const buf = Buffer.alloc(need + 1);
      json(buf, buf.length);
      return JSON.parse(buf.toString('utf8', 0, need)) as FakeCalls;
    },
    reset,
  };
}
