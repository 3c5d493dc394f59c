/* Prints the sizes and offsets of the NVML structs as gcc lays them out, as JSON, for the layout test. */
#include <stddef.h>
#include <stdio.h>
#include "fake_nvml.h"

#define F(t, f) printf("\"%s.%s\":%zu,", #t, #f, offsetof(t, f))
#define S(t) printf("\"%s\":%zu,", #t, sizeof(t))

int main(void) {
  printf("{");
  S(nvmlPciInfo_t); F(nvmlPciInfo_t, domain); F(nvmlPciInfo_t, bus); F(nvmlPciInfo_t, device); F(nvmlPciInfo_t, busId);
  S(nvmlMemory_t); F(nvmlMemory_t, total); F(nvmlMemory_t, free); F(nvmlMemory_t, used);
  S(nvmlMemory_v2_t); F(nvmlMemory_v2_t, version); F(nvmlMemory_v2_t, total); F(nvmlMemory_v2_t, reserved);
  F(nvmlMemory_v2_t, free); F(nvmlMemory_v2_t, used);
  S(nvmlUtilization_t); F(nvmlUtilization_t, gpu); F(nvmlUtilization_t, memory);
  S(nvmlProcessInfo_v1_t); F(nvmlProcessInfo_v1_t, pid); F(nvmlProcessInfo_v1_t, usedGpuMemory);
  S(nvmlProcessInfo_v2_t); F(nvmlProcessInfo_v2_t, usedGpuMemory); F(nvmlProcessInfo_v2_t, gpuInstanceId);
  F(nvmlProcessInfo_v2_t, computeInstanceId);
  S(nvmlProcessInfo_535_54_t);
  S(nvmlProcessUtilizationSample_t); F(nvmlProcessUtilizationSample_t, pid); F(nvmlProcessUtilizationSample_t, timeStamp);
  F(nvmlProcessUtilizationSample_t, smUtil); F(nvmlProcessUtilizationSample_t, memUtil);
  printf("\"nvmlMemory_v2\":%u}\n", nvmlMemory_v2);
  return 0;
}
