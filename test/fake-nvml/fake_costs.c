/*
 * What each fake NVML call costs, and how often each was made.
 *
 * The fake's calls would otherwise be free, so a benchmark on it measured only gpumem's own work and hid
 * the driver: on a real H100 one energy read costs more than all of gpumem's other work in a sample. With
 * GPUMEM_FAKE_NVML_COSTS=h100 every call spends, busy on the calling thread's CPU, the CPU time the same call
 * took on a real H100. Off by default, so tests stay fast.
 *
 * Provenance of the h100 column: bench/results/2026-11-27-h100-80gb/RESULTS.md (the GPU machine's notes),
 * "Per-call NVML cost on this machine (pynvml, CPU ms per call, 200 calls)": one NVIDIA H100 80GB HBM3, driver
 * 580.159.04, one process on the GPU, pynvml. Where RESULTS.md gives a range ("0.005–0.006") the table takes
 * its upper end. Calls it did not measure carry the cost of the measured call they are most like, marked
 * ASSUMED below.
 *
 * Checked against gpumem's own measurements on the same H100 (bench/calibration.bench.ts prints both; the
 * table was NOT fitted to either). gpumem 12ec02a read every field every sample, so its sample on one GPU with
 * one process made: memory, utilization, temperature, power draw, 2 clocks, total energy, enforced power
 * limit, compute mode, MIG mode, both process lists and per-process utilization — 6.79 ms of driver CPU by
 * this table, 97 % of it energy (3.84) and per-process utilization (2.53; at a sample every 4 ms it answers
 * NOT_FOUND, the case pynvml measured).
 *  - `gpumem status --watch` at 1 Hz, same sample: 0.77 % of a core on the H100 (RESULTS.md). The fake gives
 *    0.83 % (1.08×; gpumem's own work 0.13 % with free calls, on this loaded machine): the H100 figure less
 *    that leaves ~6.4 ms of driver CPU a sample, within 6 % of the table. Consistent.
 *  - the kit's status-bench: median 4.03 ms wall over 500 back-to-back samples. The fake gives 6.8 ms (1.70×).
 *    NOT consistent, and no fixed table can match both: wall time bounds the caller's CPU from above, so a
 *    back-to-back sample cost at most 4.03 ms while a sample a second cost ~6.4 ms. On the real driver the
 *    cost is not a fixed property of the call: something in gpumem's back-to-back loop (calls every 4 ms,
 *    in this order) made energy, per-process utilization or both cheaper than at 1 Hz and than in pynvml's
 *    loop (how its 200 calls were paced is not recorded; its figures are means, the 4.03 a median). The
 *    table keeps the pynvml figures, which agree with the rate the live commands sample at (≤ 1 Hz).
 *    bench/gpu/status-bench.ts now times the sample with and without each expensive call, back to back and
 *    once a second, by CPU, so the next GPU run says which call it is.
 *
 * The fake's own work is not the driver's: re-reading a scenario file that changed (about 0.3 ms at 8 GPUs × 64
 * processes, once per sample when a benchmark moves the numbers every second) and appending to the calls log.
 * Its CPU, measured on the calling thread, is credited: the next charged calls spin that much less, so a process
 * on the fake spends on it exactly what the table charges (the "own" counters say how much was credited). The
 * stat of the scenario file that memory calls, device counts and handle look-ups make first (a path lookup, a
 * few µs; once per GPU a sample) is timed by the monotonic clock and credited the same way.
 *
 * Counting is always on: every exported entry point adds one to its counter, costs or not. The counts (and the
 * CPU time actually spent per function) are written as JSON to the file named by GPUMEM_FAKE_NVML_CALLS_OUT
 * when the last nvmlShutdown ends the session and again when the process exits, and can be read at any time
 * in the same process through fakeNvmlCallsJson (test/fake-nvml/calls.ts reads both); with
 * GPUMEM_FAKE_NVML_CALLS_LOG the counts are also appended at each sample boundary (see log_at_boundary).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fake_nvml.h"

typedef struct { const char *fn; long long h100Ns; } fake_cost;

/* CPU ns per call on the H100 (see the provenance above). */
static const fake_cost H100[] = {
  /* measured, RESULTS.md "Per-call NVML cost" */
  { "nvmlDeviceGetTotalEnergyConsumption", 3840000 },
  { "nvmlDeviceGetProcessUtilization", 2530000 },     /* measured answering NOT_FOUND (no new sample) */
  { "nvmlDeviceGetPowerManagementLimit", 180000 },    /* not exported by the fake; gpumem does not call it */
  { "nvmlDeviceGetFanSpeed", 150000 },                /* NOT_SUPPORTED on the H100; not exported by the fake */
  { "nvmlDeviceGetMigMode", 150000 },
  { "nvmlDeviceGetBAR1MemoryInfo", 150000 },          /* not exported by the fake; gpumem does not call it */
  { "nvmlDeviceGetUtilizationRates", 21000 },
  { "nvmlDeviceGetTotalEccErrors", 12000 },           /* not exported by the fake; gpumem does not call it */
  { "nvmlDeviceGetMemoryInfo", 10000 },
  { "nvmlDeviceGetMemoryInfo_v2", 10000 },
  { "nvmlDeviceGetPowerUsage", 11000 },
  { "nvmlDeviceGetComputeRunningProcesses", 11000 },
  { "nvmlDeviceGetComputeRunningProcesses_v2", 11000 },
  { "nvmlDeviceGetComputeRunningProcesses_v3", 11000 },
  { "nvmlDeviceGetGraphicsRunningProcesses", 11000 },
  { "nvmlDeviceGetGraphicsRunningProcesses_v2", 11000 },
  { "nvmlDeviceGetGraphicsRunningProcesses_v3", 11000 },
  { "nvmlDeviceGetTemperature", 6000 },
  { "nvmlDeviceGetClockInfo", 6000 },
  { "nvmlDeviceGetComputeMode", 6000 },
  { "nvmlDeviceGetName", 4000 },
  { "nvmlDeviceGetUUID", 4000 },
  { "nvmlDeviceGetPciInfo_v3", 4000 },
  /* ASSUMED: gpumem reads the enforced limit, RESULTS.md measured the management limit; same driver query. */
  { "nvmlDeviceGetEnforcedPowerLimit", 180000 },
  /* ASSUMED: plain getters of facts the driver keeps, like Name/UUID/PciInfo (≤ 0.004 ms). */
  { "nvmlDeviceGetMinorNumber", 4000 },
  { "nvmlDeviceGetIndex", 4000 },
  { "nvmlDeviceGetCount_v2", 4000 },
  { "nvmlDeviceGetHandleByIndex_v2", 4000 },
  { "nvmlSystemGetDriverVersion", 4000 },
  { "nvmlSystemGetCudaDriverVersion_v2", 4000 },
  { "nvmlDeviceGetMaxMigDeviceCount", 4000 },
  { "nvmlDeviceGetMigDeviceHandleByIndex", 4000 },
  { "nvmlDeviceIsMigDeviceHandle", 4000 },
  { "nvmlDeviceGetGpuInstanceId", 4000 },
  { "nvmlDeviceGetComputeInstanceId", 4000 },
  /* ASSUMED: a sensor read like nvmlDeviceGetTemperature; a power read like nvmlDeviceGetPowerUsage. */
  { "nvmlDeviceGetTemperatureV", 6000 },
  { "nvmlDeviceGetFieldValues", 11000 },
  /* ASSUMED: nvmlInit opens the driver's device nodes and attaches every GPU; nothing measured it alone. A whole
     `nvidia-smi -q -x` took 0.04 s CPU on the same machine with one GPU (RESULTS.md, "Whole process"), which bounds
     it from above; the table charges half of that, 20 ms, for each GPU the init that opens the session attaches
     (fake_nvml.c charges it once per device of the scenario), and 1 ms for the last shutdown. Per GPU because the
     attach is per GPU, and because a published figure for eight GPUs is of that size: NVIDIA's mig-parted
     (github.com/NVIDIA/mig-parted, pull request 332) reports that removing about 99 of 100 init/shutdown cycles
     cut a service's CPU on an 8 × B200 machine from about 42 s to about 9 s, about 0.33 s a cycle, 40 ms a GPU. */
  { "nvmlInit_v2", 20000000 },
  { "nvmlInit", 20000000 },
  { "nvmlInitWithFlags", 20000000 },
  { "nvmlShutdown", 1000000 },
};
#define NCOSTS ((int)(sizeof H100 / sizeof H100[0]))

/* One counter per function that was called; a name without a table entry gets a slot (cost 0) too. */
#define FAKE_MAX_COUNTERS 128
typedef struct { const char *fn; long long costNs; unsigned long long calls; unsigned long long spentNs; } fake_counter;
static fake_counter g_counters[FAKE_MAX_COUNTERS];
static int g_ncounters;
static int g_costsOn = -1; /* -1: GPUMEM_FAKE_NVML_COSTS not read yet */
/* The fake's own work on the calling thread (fake_own_work): how often, its CPU, how much of it the charged calls
   have absorbed so far and how much is still waiting to be (creditNs). */
static struct { unsigned long long count, spentNs, creditedNs, creditNs, checks, checkNs; } g_own;

static long long table_cost(const char *fn) {
  for (int i = 0; i < NCOSTS; i++)
    if (strcmp(H100[i].fn, fn) == 0) return H100[i].h100Ns;
  return 0;
}

int fake_counter_index(const char *fn) {
  for (int i = 0; i < g_ncounters; i++)
    if (strcmp(g_counters[i].fn, fn) == 0) return i;
  if (g_ncounters >= FAKE_MAX_COUNTERS) return -1;
  g_counters[g_ncounters] = (fake_counter){ fn, table_cost(fn), 0, 0 };
  return g_ncounters++;
}

/* Reads GPUMEM_FAKE_NVML_COSTS: unset, "" or "off" → free calls; "h100" → the table; anything else → -1. */
int fake_costs_configure(void) {
  const char *v = getenv("GPUMEM_FAKE_NVML_COSTS");
  if (!v || !v[0] || strcmp(v, "off") == 0) g_costsOn = 0;
  else if (strcmp(v, "h100") == 0) g_costsOn = 1;
  else {
    fprintf(stderr, "fake NVML: GPUMEM_FAKE_NVML_COSTS=%s is not a known cost table (known: h100, off)\n", v);
    g_costsOn = 0;
    return -1;
  }
  return 0;
}

static void log_at_boundary(void);

unsigned long long fake_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* Counts one call and, when `spend` and costs are on, spins until this thread has used the call's CPU time.
   Thread CPU time, not wall time: on a busy machine a descheduled spin would otherwise charge less CPU than
   the table says. */
void fake_charge(int index, int spend) { fake_charge_times(index, spend, 1); }

/* The same for a call whose cost is the table's `times` over (nvmlInit: once per GPU it attaches). */
void fake_charge_times(int index, int spend, int times) {
  if (index < 0) return;
  log_at_boundary();
  fake_counter *c = &g_counters[index];
  c->calls++;
  if (g_costsOn < 0) fake_costs_configure();
  if (!spend || g_costsOn != 1 || c->costNs <= 0) return;
  /* What the fake's own work already took of this thread's CPU counts as part of this call's cost. */
  unsigned long long cost = (unsigned long long)c->costNs * (unsigned long long)(times > 1 ? times : 1), credit = g_own.creditNs < cost ? g_own.creditNs : cost;
  g_own.creditNs -= credit;
  g_own.creditedNs += credit;
  unsigned long long start = fake_thread_cpu_ns(), now = start;
  while (now - start < cost - credit) now = fake_thread_cpu_ns();
  c->spentNs += now - start + credit;
}

unsigned long long fake_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

void fake_own_check(unsigned long long ns) {
  g_own.checks++;
  g_own.checkNs += ns;
  if (g_costsOn == 1) g_own.creditNs += ns;
}

void fake_own_work(unsigned long long ns) {
  g_own.count++;
  g_own.spentNs += ns;
  /* Credit only where calls are charged: with free calls there is nothing to take it off. */
  if (g_costsOn == 1) g_own.creditNs += ns;
}

#define JSON_CAP (FAKE_MAX_COUNTERS * 128 + 192)

/* The counters as JSON: {"costs":"h100"|"off","calls":{"fn":{"count":N,"costNs":C,"spentNs":S},…},
   "own":{"count":N,"spentNs":S,"checks":K,"checkNs":T,"creditedNs":C,"pendingNs":P}} (the fake's own work,
   fake_own_work, and its checks of the scenario file, fake_own_check; C + P = S + T). Returns the
   length the whole text needs (without the NUL); writes at most len bytes including the NUL. */
API int fakeNvmlCallsJson(char *out, unsigned len) {
  char buf[JSON_CAP];
  int n = snprintf(buf, sizeof buf, "{\"costs\":\"%s\",\"calls\":{", g_costsOn == 1 ? "h100" : "off");
  int first = 1;
  for (int i = 0; i < g_ncounters && n < (int)sizeof buf; i++) {
    const fake_counter *c = &g_counters[i];
    if (c->calls == 0) continue;
    n += snprintf(buf + n, sizeof buf - (size_t)n, "%s\"%s\":{\"count\":%llu,\"costNs\":%lld,\"spentNs\":%llu}",
                  first ? "" : ",", c->fn, c->calls, c->costNs, c->spentNs);
    first = 0;
  }
  if (n < (int)sizeof buf)
    n += snprintf(buf + n, sizeof buf - (size_t)n,
                  "},\"own\":{\"count\":%llu,\"spentNs\":%llu,\"checks\":%llu,\"checkNs\":%llu,\"creditedNs\":%llu,\"pendingNs\":%llu}}",
                  g_own.count, g_own.spentNs, g_own.checks, g_own.checkNs, g_own.creditedNs, g_own.creditNs);
  if (out && len > 0) snprintf(out, len, "%s", buf);
  return n;
}

/* Sets every counter back to zero (a test measuring one sample starts from here). */
API void fakeNvmlCallsReset(void) {
  for (int i = 0; i < g_ncounters; i++) g_counters[i].calls = g_counters[i].spentNs = 0;
}

/* Writes the counters to GPUMEM_FAKE_NVML_CALLS_OUT (temp file + rename, so a reader never sees half). */
void fake_calls_write(void) {
  const char *path = getenv("GPUMEM_FAKE_NVML_CALLS_OUT");
  if (!path || !path[0]) return;
  char json[JSON_CAP];
  fakeNvmlCallsJson(json, sizeof json);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  fputs(json, f);
  fputc('\n', f);
  if (fclose(f) == 0) rename(tmp, path);
  else remove(tmp);
}

/* GPUMEM_FAKE_NVML_CALLS_LOG: a call that follows at least LOG_GAP_NS (40 ms: a sample's calls come back to back, and 10 Hz leaves ~99 ms between samples) without calls starts a new sample, so the
   counts so far (every earlier sample's calls) are appended there as one line with the wall-clock time,
   {"tMs":…,"costs":…,"calls":{…}}. A benchmark subtracts two lines to get the calls of the samples between,
   start-up excluded, without stopping the process. Off (no clock read) when the variable is unset. */
#define LOG_GAP_NS 40000000ULL
static int g_logOn = -1;
static unsigned long long g_lastCallNs;

static void log_at_boundary(void) {
  if (g_logOn == 0) return;
  const char *path = getenv("GPUMEM_FAKE_NVML_CALLS_LOG");
  if (g_logOn < 0) g_logOn = path && path[0];
  if (!g_logOn) return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  unsigned long long now = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
  int boundary = g_lastCallNs != 0 && now - g_lastCallNs >= LOG_GAP_NS;
  g_lastCallNs = now;
  if (!boundary) return;
  unsigned long long startNs = fake_thread_cpu_ns();
  char json[JSON_CAP];
  fakeNvmlCallsJson(json, sizeof json);
  FILE *f = fopen(path, "a");
  if (!f) return;
  clock_gettime(CLOCK_REALTIME, &ts);
  fprintf(f, "{\"tMs\":%llu,%s\n", (unsigned long long)ts.tv_sec * 1000ULL + (unsigned long long)ts.tv_nsec / 1000000ULL, json + 1);
  fclose(f);
  fake_own_work(fake_thread_cpu_ns() - startNs);
}

/* A process that exits without nvmlShutdown still leaves its counts. */
__attribute__((destructor)) static void write_at_exit(void) { fake_calls_write(); }
