/*
 * Process lists of the fake NVML: the v1 (16-byte), `_v2` (24-byte) and `_v3` calls (24 bytes, or 32 on
 * the 535.54 era), the INSUFFICIENT_SIZE protocol with processes that appear between two calls ("late"
 * rows become visible once the driver has answered INSUFFICIENT_SIZE), and per-process SM utilization.
 */
#include <string.h>
#include <time.h>
#include "fake_nvml.h"

/* The driver's per-process utilization sampling. nvmlUtilization_t documents a sample period "between 1 second
   and 1/6 second, depending on the product"; the fake takes 1/6 s. How many samples the driver keeps is not
   documented: the fake keeps a minute (ASSUMED), the slowest period at which gpumem reads (src/cli/nvml-fields.ts).
   A real driver returns samples only for processes with non-zero utilization in the period; the fake also
   returns a scenario's 0 % as samples (NOT modelled: gpumem's tests of idle rows rely on them). */
#define UTIL_PERIOD_US 166667ULL
#define UTIL_DEPTH 360ULL

static int visible(const fake_device *d, const fake_mig *m, const fake_process *p, int kind) {
  if (!(p->kinds & kind) || (p->late && !d->lateShown)) return 0;
  return !m || (p->gi != FAKE_UNSET && (unsigned)p->gi == m->gi);
}

static int has_late(const fake_device *d) {
  for (int i = 0; i < d->nprocs; i++) if (d->procs[i].late) return 1;
  return 0;
}

static void write_entry(unsigned char *at, unsigned stride, const fake_process *p) {
  memset(at, 0, stride);
  unsigned long long used = p->usedBytes == FAKE_UNSET ? NVML_VALUE_NOT_AVAILABLE_ULL : (unsigned long long)p->usedBytes;
  memcpy(at, &p->pid, 4);
  memcpy(at + 8, &used, 8);
  if (stride >= 24) {
    unsigned gi = p->gi == FAKE_UNSET ? NVML_NO_INSTANCE : (unsigned)p->gi;
    unsigned ci = p->ci == FAKE_UNSET ? NVML_NO_INSTANCE : (unsigned)p->ci;
    memcpy(at + 16, &gi, 4);
    memcpy(at + 20, &ci, 4);
  }
}

static nvmlReturn_t list(const char *fn, void *h, unsigned *count, void *infos, unsigned stride, int kind) {
  fake_device *d;
  fake_mig *m;
  int rc = fake_enter(fn, h, &d, &m);
  if (rc) return rc;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned n = 0;
  for (int i = 0; i < d->nprocs; i++) n += (unsigned)visible(d, m, &d->procs[i], kind);
  if (*count < n || (n > 0 && !infos)) {
    *count = n;
    /* Processes that start right after this answer: the caller's next call will need more room. */
    if (has_late(d)) d->lateShown = 1;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  unsigned k = 0;
  for (int i = 0; i < d->nprocs; i++)
    if (visible(d, m, &d->procs[i], kind)) write_entry((unsigned char *)infos + (size_t)k++ * stride, stride, &d->procs[i]);
  *count = n;
  return NVML_SUCCESS;
}

#if FAKE_ERA == 535054
#define V3_STRIDE 32u
#else
#define V3_STRIDE 24u
#endif

API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(void *h, unsigned *c, void *p) { CHARGE(); return list(__func__, h, c, p, 16, KIND_COMPUTE); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(void *h, unsigned *c, void *p) { CHARGE(); return list(__func__, h, c, p, 16, KIND_GRAPHICS); }
#if FAKE_ERA >= 450066
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(void *h, unsigned *c, void *p) { CHARGE(); return list(__func__, h, c, p, 24, KIND_COMPUTE); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(void *h, unsigned *c, void *p) { CHARGE(); return list(__func__, h, c, p, 24, KIND_GRAPHICS); }
#endif
#if FAKE_ERA >= 510039
API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *c, void *p) { CHARGE(); return list(__func__, h, c, p, V3_STRIDE, KIND_COMPUTE); }
API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned *c, void *p) { CHARGE(); return list(__func__, h, c, p, V3_STRIDE, KIND_GRAPHICS); }
#endif
#if FAKE_ERA >= 535054
/* Present from 535.43 on; gpumem only probes for it (it tells the 32-byte `_v3` era apart). */
API nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(void *h, void *info) { CHARGE(); (void)h; (void)info; return NVML_ERROR_NOT_SUPPORTED; }
#endif
#if FAKE_ERA >= 535104
API nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(void *h, void *list) { CHARGE(); (void)h; (void)list; return NVML_ERROR_NOT_SUPPORTED; }
#endif

API nvmlReturn_t nvmlDeviceGetProcessUtilization(void *h, nvmlProcessUtilizationSample_t *out, unsigned *count,
                                                 unsigned long long lastSeen) {
  ENTER(h);
  if (d->migMode == 1) return NVML_ERROR_NOT_SUPPORTED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->nutil > 0) {
    /* The scenario's buffered samples: only those newer than lastSeen, as the driver answers. */
    unsigned fresh = 0;
    for (int i = 0; i < d->nutil; i++) fresh += d->util[i].timeStamp > lastSeen;
    if (fresh == 0) return NVML_ERROR_NOT_FOUND;
    if (!out || *count < fresh) {
      *count = fresh;
      return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    unsigned k = 0;
    for (int i = 0; i < d->nutil; i++) {
      if (d->util[i].timeStamp <= lastSeen) continue;
      memset(&out[k], 0, sizeof out[k]);
      out[k].pid = d->util[i].pid;
      out[k].timeStamp = d->util[i].timeStamp;
      out[k].smUtil = d->util[i].smUtil;
      k++;
    }
    *count = fresh;
    return NVML_SUCCESS;
  }
  /* Without scenario samples the fake samples like the driver: every UTIL_PERIOD_US on a fixed grid, each
     process with a non-zero SM share one sample per period (the driver returns none for a process that did not
     run in a period: on an H100, DataLoader workers holding a context never had one), the newest UTIL_DEPTH
     periods kept. A read gets every
     sample newer than lastSeen (lastSeen 0: the whole buffer), NOT_FOUND when the driver took none since —
     so a read every few seconds gets all the periods in between, and two reads within one period the second
     nothing, as a real driver answers. */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned long long nowUs = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
  unsigned long long newest = nowUs / UTIL_PERIOD_US * UTIL_PERIOD_US;
  unsigned long long oldest = newest - (UTIL_DEPTH - 1) * UTIL_PERIOD_US;
  unsigned long long first = lastSeen < oldest ? oldest : (lastSeen / UTIL_PERIOD_US + 1) * UTIL_PERIOD_US;
  unsigned pids = 0;
  for (int i = 0; i < d->nprocs; i++) pids += d->procs[i].smUtil != FAKE_UNSET && d->procs[i].smUtil != 0 && !(d->procs[i].late && !d->lateShown);
  if (pids == 0 || first > newest) return NVML_ERROR_NOT_FOUND;
  unsigned periods = (unsigned)((newest - first) / UTIL_PERIOD_US + 1);
  unsigned n = pids * periods;
  if (!out || *count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  unsigned k = 0;
  for (unsigned long long at = first; at <= newest; at += UTIL_PERIOD_US) {
    for (int i = 0; i < d->nprocs; i++) {
      const fake_process *p = &d->procs[i];
      if (p->smUtil == FAKE_UNSET || p->smUtil == 0 || (p->late && !d->lateShown)) continue;
      memset(&out[k], 0, sizeof out[k]);
      out[k].pid = p->pid;
      out[k].timeStamp = at;
      out[k].smUtil = (unsigned)p->smUtil;
      k++;
    }
  }
  *count = n;
  return NVML_SUCCESS;
}
