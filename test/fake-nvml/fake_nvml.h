/*
 * Fake libnvidia-ml.so.1 for gpumem's tests: the NVML types it needs (laid out exactly as in nvml.h on
 * x86-64) and the scenario model the fake serves. FAKE_ERA picks which driver generation is imitated;
 * symbols a generation lacks are not compiled, so they are really missing from the .so.
 */
#ifndef FAKE_NVML_H
#define FAKE_NVML_H

#include <stdint.h>

/* Driver generations as major*1000+minor: 450.51, 510.39, 535.54, 535.104, 590.48. */
#ifndef FAKE_ERA
#define FAKE_ERA 590048
#endif

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25
#define NVML_ERROR_UNKNOWN 999

#define NVML_VALUE_NOT_AVAILABLE_ULL 0xFFFFFFFFFFFFFFFFULL
#define NVML_NO_INSTANCE 0xFFFFFFFFu

typedef struct { char busIdLegacy[16]; unsigned domain, bus, device, pciDeviceId, pciSubSystemId; char busId[32]; } nvmlPciInfo_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
#define nvmlMemory_v2 ((unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; } nvmlProcessInfo_v2_t;
/* The 535.43–535.86 `_v3` entry: 32 bytes, with no version bump. */
typedef struct { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId;
                 unsigned long long usedGpuCcProtectedMemory; } nvmlProcessInfo_535_54_t;
typedef nvmlProcessInfo_535_54_t nvmlProcessDetail_v1_t;
typedef struct { unsigned version, mode, numProcArrayEntries; nvmlProcessDetail_v1_t *procArray; } nvmlProcessDetailList_v1_t;
typedef struct { unsigned pid; unsigned long long timeStamp; unsigned smUtil, memUtil, encUtil, decUtil; } nvmlProcessUtilizationSample_t;
typedef struct { unsigned version; int sensorType; int temperature; } nvmlTemperature_v1_t;

/* ---- scenario model ---- */
#define FAKE_MAX_DEVICES 64
#define FAKE_MAX_PROCS 512
#define FAKE_MAX_MIG 8
#define FAKE_MAX_ERRORS 64
#define FAKE_MAX_UTIL_SAMPLES 8192
#define FAKE_UNSET (-1LL)

enum { KIND_COMPUTE = 1, KIND_GRAPHICS = 2 };
enum { DEV_OK = 0, DEV_LOST = 1, DEV_NOPERM = 2 };
#define HANDLE_MAGIC_GPU 0x47505530u
#define HANDLE_MAGIC_MIG 0x4d494730u

typedef struct {
  unsigned pid; int kinds; long long usedBytes; /* FAKE_UNSET = not available */
  long long gi, ci, smUtil; int late;
} fake_process;

typedef struct fake_mig {
  unsigned magic; int present; struct fake_device *parent;
  unsigned gi, ci; char uuid[96]; char profile[32];
  long long total, reserved, used;
} fake_mig;

/* One per-process utilization sample the driver buffered, with its timestamp (µs since the epoch). */
typedef struct { unsigned pid; unsigned long long timeStamp; unsigned smUtil; } fake_util_sample;

typedef struct fake_device {
  unsigned magic; int present, status;
  char uuid[96], name[96], pci[32];
  long long minor, total, reserved, used, utilGpu, utilMem, tempC, powerMw, powerLimitMw, computeMode, migMode;
  long long powerInstantMw, smClockMhz, memClockMhz, energyMj;
  int nprocs, lateShown;
  fake_process procs[FAKE_MAX_PROCS];
  int nmig;
  fake_mig mig[FAKE_MAX_MIG];
  int nutil; /* > 0: nvmlDeviceGetProcessUtilization serves these instead of one sample per process "now" */
  fake_util_sample util[FAKE_MAX_UTIL_SAMPLES];
} fake_device;

typedef struct { char fn[64]; int device; /* -1 = any */ int code; int remaining; /* -1 = forever */ } fake_error;

typedef struct {
  char driver[80]; long long cudaVersion;
  int ndevices; fake_device dev[FAKE_MAX_DEVICES];
  int nerrors; fake_error errors[FAKE_MAX_ERRORS];
} fake_state;

extern fake_state g_fake;
/* Re-reads the scenario named by GPUMEM_FAKE_NVML_SCENARIO when it changed; returns 0 when one is loaded. */
int fake_reload(void);
/* An injected error for (function, device index), or NVML_SUCCESS. */
int fake_injected(const char *fn, int deviceIndex);


/* Exported entry points; everything else stays hidden (built with -fvisibility=hidden). */
#define API __attribute__((visibility("default")))
extern int g_refs;
/* Resolves a handle to its device (and MIG instance), applying injected errors and lost state. */
int fake_enter(const char *fn, void *h, fake_device **d, fake_mig **m);
/* Counts one call of the enclosing entry point and, with GPUMEM_FAKE_NVML_COSTS set, spends its cost (fake_costs.c). */
int fake_counter_index(const char *fn);
void fake_charge(int index, int spend);
void fake_charge_times(int index, int spend, int times);
int fake_costs_configure(void);
void fake_calls_write(void);
/* CPU time of this thread, ns (the clock the charges are spent on). */
unsigned long long fake_thread_cpu_ns(void);
/* The fake's own work (re-reading a changed scenario, writing the calls log) took `ns` of the caller's CPU: a
   real driver does neither, so the next charged calls spin that much less (fake_costs.c). */
void fake_own_work(unsigned long long ns);
/* The stat of the scenario file before each call: its time is credited like own work, not counted as a re-read. */
void fake_own_check(unsigned long long ns);
unsigned long long fake_monotonic_ns(void);
#define CHARGE_IF(spend) do { static int idx_ = -2; if (idx_ == -2) idx_ = fake_counter_index(__func__); fake_charge(idx_, (spend)); } while (0)
#define CHARGE() CHARGE_IF(1)
#define ENTER(h) CHARGE(); fake_device *d; fake_mig *m; { int rc_ = fake_enter(__func__, h, &d, &m); if (rc_) return rc_; }
#define UINT_FIELD(value, out)                          \
  do {                                                   \
    if ((value) == FAKE_UNSET) return NVML_ERROR_NOT_SUPPORTED; \
    if (!(out)) return NVML_ERROR_INVALID_ARGUMENT;      \
    *(out) = (unsigned)(value);                          \
    return NVML_SUCCESS;                                 \
  } while (0)


#endif
