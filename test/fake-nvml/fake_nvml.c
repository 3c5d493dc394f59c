/*
 * The NVML entry points the fake exports. Each behaves as the real driver of the imitated era does in the
 * ways gpumem depends on: versioned symbols present or missing, the `_v3` entry width, the memory-struct
 * version check, the INSUFFICIENT_SIZE count protocol, NOT_AVAILABLE values, lost and forbidden devices.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "fake_nvml.h"

int g_refs;

/* Resolves a handle to its device (and MIG instance), applying injected errors and lost/forbidden state. */
int fake_enter(const char *fn, void *h, fake_device **d, fake_mig **m) {
  if (g_refs == 0) return NVML_ERROR_UNINITIALIZED;
  char *p = (char *)h, *lo = (char *)&g_fake.dev[0], *hi = (char *)&g_fake.dev[FAKE_MAX_DEVICES];
  if (p < lo || p >= hi) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned magic = *(unsigned *)h;
  *m = magic == HANDLE_MAGIC_MIG ? (fake_mig *)h : NULL;
  *d = *m ? (*m)->parent : magic == HANDLE_MAGIC_GPU ? (fake_device *)h : NULL;
  if (!*d) return NVML_ERROR_INVALID_ARGUMENT;
  int rc = fake_injected(fn, (int)(*d - g_fake.dev));
  if (rc) return rc;
  if (!(*d)->present || (*d)->status == DEV_LOST || (*m && !(*m)->present)) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}


static nvmlReturn_t do_init(const char *fn) {
  /* An unknown cost table fails loudly rather than measuring free calls (fake_costs.c printed why). */
  if (fake_costs_configure() != 0) return NVML_ERROR_UNKNOWN;
  int rc = fake_reload() == 0 ? fake_injected(fn, -1) : NVML_ERROR_DRIVER_NOT_LOADED;
  if (rc == NVML_SUCCESS) g_refs++;
  return rc;
}
/* As on the real driver, only the init that opens the session does the work (for each GPU it attaches: fake_costs.c
   says why); nested ones only count. The charge comes after the scenario is read, so the reading is part of it
   (fake_own_work). */
#define INIT_CHARGED(fn) do { \
    int opens_ = g_refs == 0; nvmlReturn_t rc_ = do_init(fn); \
    static int idx_ = -2; if (idx_ == -2) idx_ = fake_counter_index(fn); \
    fake_charge_times(idx_, opens_, g_fake.ndevices); return rc_; } while (0)
API nvmlReturn_t nvmlInit_v2(void) { INIT_CHARGED(__func__); }
API nvmlReturn_t nvmlInit(void) { INIT_CHARGED(__func__); }
API nvmlReturn_t nvmlInitWithFlags(unsigned flags) { (void)flags; INIT_CHARGED(__func__); }
API nvmlReturn_t nvmlShutdown(void) {
  CHARGE_IF(g_refs == 1);
  if (g_refs > 0 && --g_refs == 0) fake_calls_write();
  return NVML_SUCCESS;
}

API const char *nvmlErrorString(nvmlReturn_t r) {
  CHARGE();
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    default: return "Unknown Error";
  }
}

API nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned len) {
  CHARGE();
  if (g_refs == 0) return NVML_ERROR_UNINITIALIZED;
  if (!g_fake.driver[0]) return NVML_ERROR_NOT_SUPPORTED;
  if (strlen(g_fake.driver) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(v, g_fake.driver);
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) {
  CHARGE();
  if (g_refs == 0) return NVML_ERROR_UNINITIALIZED;
  int rc = fake_injected(__func__, -1);
  if (rc) return rc;
  if (g_fake.cudaVersion == FAKE_UNSET) return 12; /* LIBRARY_NOT_FOUND: no libcuda */
  *v = (int)g_fake.cudaVersion;
  return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count) {
  CHARGE();
  if (g_refs == 0) return NVML_ERROR_UNINITIALIZED;
  fake_reload();
  int rc = fake_injected(__func__, -1);
  if (rc) return rc;
  *count = (unsigned)g_fake.ndevices;
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) {
  CHARGE();
  if (g_refs == 0) return NVML_ERROR_UNINITIALIZED;
  fake_reload();
  if (i >= (unsigned)g_fake.ndevices) return NVML_ERROR_INVALID_ARGUMENT;
  int rc = fake_injected(__func__, (int)i);
  if (rc) return rc;
  if (g_fake.dev[i].status == DEV_NOPERM) return NVML_ERROR_NO_PERMISSION;
  *h = &g_fake.dev[i];
  return NVML_SUCCESS;
}

static nvmlReturn_t copy_out(const char *s, char *out, unsigned len) {
  if (!s[0]) return NVML_ERROR_NOT_SUPPORTED;
  if (strlen(s) + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(out, s);
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceGetName(void *h, char *out, unsigned len) {
  ENTER(h);
  if (!m) return copy_out(d->name, out, len);
  char buf[160];
  snprintf(buf, sizeof buf, "%s MIG %s", d->name, m->profile);
  return copy_out(buf, out, len);
}
API nvmlReturn_t nvmlDeviceGetUUID(void *h, char *out, unsigned len) { ENTER(h); return copy_out(m ? m->uuid : d->uuid, out, len); }
API nvmlReturn_t nvmlDeviceGetMinorNumber(void *h, unsigned *v) { ENTER(h); UINT_FIELD(d->minor, v); }
API nvmlReturn_t nvmlDeviceGetIndex(void *h, unsigned *v) { ENTER(h); UINT_FIELD(d - g_fake.dev, v); }
API nvmlReturn_t nvmlDeviceGetPciInfo_v3(void *h, nvmlPciInfo_t *pci) {
  ENTER(h);
  if (!d->pci[0]) return NVML_ERROR_NOT_SUPPORTED;
  memset(pci, 0, sizeof *pci);
  snprintf(pci->busId, sizeof pci->busId, "%s", d->pci);
  unsigned dev = 0, fn = 0;
  sscanf(d->pci, "%x:%x:%x.%x", &pci->domain, &pci->bus, &dev, &fn);
  pci->device = dev;
  pci->pciDeviceId = (0x2330u << 16) | 0x10DEu;
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", pci->domain & 0xFFFF, pci->bus, dev);
  return NVML_SUCCESS;
}

API nvmlReturn_t nvmlDeviceGetMemoryInfo(void *h, nvmlMemory_t *mem) {
  fake_reload();
  ENTER(h);
  long long total = m ? m->total : d->total, reserved = m ? m->reserved : d->reserved, used = m ? m->used : d->used;
  if (total == FAKE_UNSET) return NVML_ERROR_NOT_SUPPORTED;
  /* Since R510 the v1 call lumps driver-reserved memory into `used`. */
  mem->total = (unsigned long long)total;
  mem->used = (unsigned long long)(used + reserved);
  mem->free = (unsigned long long)(total - used - reserved);
  return NVML_SUCCESS;
}

#if FAKE_ERA >= 510039
API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(void *h, nvmlMemory_v2_t *mem) {
  fake_reload();
  ENTER(h);
  /* R510/R515 answered a wrong struct version with FUNCTION_NOT_FOUND; R525 added ARGUMENT_VERSION_MISMATCH. */
  if (mem->version != nvmlMemory_v2)
    return FAKE_ERA >= 525000 ? NVML_ERROR_ARGUMENT_VERSION_MISMATCH : NVML_ERROR_FUNCTION_NOT_FOUND;
  long long total = m ? m->total : d->total, reserved = m ? m->reserved : d->reserved, used = m ? m->used : d->used;
  if (total == FAKE_UNSET) return NVML_ERROR_NOT_SUPPORTED;
  mem->total = (unsigned long long)total;
  mem->reserved = (unsigned long long)reserved;
  mem->used = (unsigned long long)used;
  mem->free = (unsigned long long)(total - used - reserved);
  return NVML_SUCCESS;
}
#endif

API nvmlReturn_t nvmlDeviceGetUtilizationRates(void *h, nvmlUtilization_t *u) {
  ENTER(h);
  if (d->migMode == 1 || d->utilGpu == FAKE_UNSET) return NVML_ERROR_NOT_SUPPORTED;
  u->gpu = (unsigned)d->utilGpu;
  u->memory = (unsigned)d->utilMem;
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceGetTemperature(void *h, int sensor, unsigned *t) {
  ENTER(h);
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
  UINT_FIELD(d->tempC, t);
}
API nvmlReturn_t nvmlDeviceGetPowerUsage(void *h, unsigned *v) { ENTER(h); UINT_FIELD(d->powerMw, v); }
API nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned *v) { ENTER(h); UINT_FIELD(d->powerLimitMw, v); }
/* type 1 = NVML_CLOCK_SM, 2 = NVML_CLOCK_MEM */
API nvmlReturn_t nvmlDeviceGetClockInfo(void *h, int type, unsigned *v) {
  ENTER(h);
  if (type == 1) UINT_FIELD(d->smClockMhz, v);
  if (type == 2) UINT_FIELD(d->memClockMhz, v);
  return NVML_ERROR_INVALID_ARGUMENT;
}
API nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *v) {
  ENTER(h);
  if (d->energyMj == FAKE_UNSET) return NVML_ERROR_NOT_SUPPORTED;
  if (!v) return NVML_ERROR_INVALID_ARGUMENT;
  *v = (unsigned long long)d->energyMj;
  return NVML_SUCCESS;
}
/* nvmlFieldValue_t: fieldId, scopeId (u32), timestamp, latencyUsec (i64), valueType, nvmlReturn (i32), value (8 bytes) = 40 bytes.
   Only NVML_FI_DEV_POWER_INSTANT (186, unsigned int mW) is known; every other field answers NOT_SUPPORTED in its slot. */
typedef struct { unsigned fieldId, scopeId; long long timestamp, latencyUsec; int valueType, nvmlReturn; union { unsigned uiVal; unsigned long long ullVal; } value; } fake_field_value;
API nvmlReturn_t nvmlDeviceGetFieldValues(void *h, int count, fake_field_value *values) {
  ENTER(h);
  if (count < 0 || (count > 0 && !values)) return NVML_ERROR_INVALID_ARGUMENT;
  for (int k = 0; k < count; k++) {
    fake_field_value *f = &values[k];
    f->timestamp = 0; f->latencyUsec = 0;
    if (f->fieldId == 186 && d->powerInstantMw != FAKE_UNSET) {
      f->valueType = 1; /* NVML_VALUE_TYPE_UNSIGNED_INT */
      f->nvmlReturn = NVML_SUCCESS;
      f->value.ullVal = 0;
      f->value.uiVal = (unsigned)d->powerInstantMw;
    } else {
      f->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceGetComputeMode(void *h, int *v) {
  ENTER(h);
  if (d->migMode == 1 && !m) return NVML_ERROR_NOT_SUPPORTED; /* needs a MIG handle when MIG is on */
  UINT_FIELD(d->computeMode, (unsigned *)v);
}

#if FAKE_ERA >= 565057
API nvmlReturn_t nvmlDeviceGetTemperatureV(void *h, nvmlTemperature_v1_t *t) {
  ENTER(h);
  if (t->version != (unsigned)(sizeof(nvmlTemperature_v1_t) | (1u << 24))) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (d->tempC == FAKE_UNSET) return NVML_ERROR_NOT_SUPPORTED;
  t->temperature = (int)d->tempC;
  return NVML_SUCCESS;
}
/* 550+: gpumem keeps using nvmlDeviceGetProcessUtilization, which every era has. */
API nvmlReturn_t nvmlDeviceGetProcessesUtilizationInfo(void *h, void *info) { CHARGE(); (void)h; (void)info; return NVML_ERROR_NOT_SUPPORTED; }
#endif
