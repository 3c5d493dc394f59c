/* MIG entry points of the fake NVML (present in every era it imitates: MIG arrived in 450.51). */
#include "fake_nvml.h"

API nvmlReturn_t nvmlDeviceGetMigMode(void *h, unsigned *current, unsigned *pending) {
  ENTER(h);
  if (m || d->migMode == FAKE_UNSET) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = (unsigned)d->migMode;
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(void *h, unsigned *count) {
  ENTER(h);
  *count = d->migMode == 1 ? FAKE_MAX_MIG : 0;
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(void *h, unsigned index, void **out) {
  ENTER(h);
  if (m || d->migMode != 1) return NVML_ERROR_INVALID_ARGUMENT;
  if (index >= FAKE_MAX_MIG) return NVML_ERROR_INVALID_ARGUMENT;
  if ((int)index >= d->nmig) return NVML_ERROR_NOT_FOUND;
  *out = &d->mig[index];
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(void *h, unsigned *is) { ENTER(h); *is = m != 0; return NVML_SUCCESS; }
API nvmlReturn_t nvmlDeviceGetGpuInstanceId(void *h, unsigned *id) {
  ENTER(h);
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  *id = m->gi;
  return NVML_SUCCESS;
}
API nvmlReturn_t nvmlDeviceGetComputeInstanceId(void *h, unsigned *id) {
  ENTER(h);
  if (!m) return NVML_ERROR_INVALID_ARGUMENT;
  *id = m->ci;
  return NVML_SUCCESS;
}
