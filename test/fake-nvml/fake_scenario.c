/*
 * Scenario loading for the fake NVML: a line format (documented in test/fake-nvml/scenario.ts) read at
 * nvmlInit and re-read whenever the file's inode, size or mtime changes, so a running test can move memory,
 * lose a device or inject errors between two samples. Device handles point into g_fake and stay valid
 * across reloads; a device that disappears from the file answers GPU_IS_LOST.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fake_nvml.h"

fake_state g_fake;
static struct stat g_seen;
static int g_loaded;

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = 0;
  return s;
}

static long long parse_num(const char *s) {
  if (strcmp(s, "na") == 0) return FAKE_UNSET;
  return strtoll(s, NULL, 0);
}

static void copy_str(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src);
}

/* "process PID KIND USED [gi=N] [ci=N] [sm=N] [late]" */
static void parse_process(fake_device *d, char *rest) {
  if (d->nprocs >= FAKE_MAX_PROCS) return;
  fake_process *p = &d->procs[d->nprocs++];
  memset(p, 0, sizeof *p);
  p->gi = p->ci = p->smUtil = FAKE_UNSET;
  char *save = NULL;
  char *tok = strtok_r(rest, " \t", &save);
  for (int i = 0; tok; i++, tok = strtok_r(NULL, " \t", &save)) {
    if (i == 0) p->pid = (unsigned)strtoul(tok, NULL, 10);
    else if (i == 1) p->kinds = (strchr(tok, 'C') ? KIND_COMPUTE : 0) | (strchr(tok, 'G') ? KIND_GRAPHICS : 0);
    else if (i == 2) p->usedBytes = parse_num(tok);
    else if (strncmp(tok, "gi=", 3) == 0) p->gi = parse_num(tok + 3);
    else if (strncmp(tok, "ci=", 3) == 0) p->ci = parse_num(tok + 3);
    else if (strncmp(tok, "sm=", 3) == 0) p->smUtil = parse_num(tok + 3);
    else if (strcmp(tok, "late") == 0) p->late = 1;
  }
}

/* "utilsample PID TIMESTAMP_US SM_PCT" */
static void parse_util_sample(fake_device *d, char *rest) {
  if (d->nutil >= FAKE_MAX_UTIL_SAMPLES) return;
  unsigned pid = 0, sm = 0;
  unsigned long long ts = 0;
  if (sscanf(rest, "%u %llu %u", &pid, &ts, &sm) < 3) return;
  fake_util_sample *u = &d->util[d->nutil++];
  u->pid = pid;
  u->timeStamp = ts;
  u->smUtil = sm;
}

/* "mig GI CI UUID PROFILE TOTAL RESERVED USED" */
static void parse_mig(fake_device *d, char *rest) {
  if (d->nmig >= FAKE_MAX_MIG) return;
  fake_mig *m = &d->mig[d->nmig++];
  long long gi = 0, ci = 0;
  char uuid[96] = "", profile[32] = "";
  if (sscanf(rest, "%lld %lld %95s %31s %lld %lld %lld", &gi, &ci, uuid, profile, &m->total, &m->reserved, &m->used) < 7) {
    d->nmig--;
    return;
  }
  m->magic = HANDLE_MAGIC_MIG;
  m->present = 1;
  m->parent = d;
  m->gi = (unsigned)gi;
  m->ci = (unsigned)ci;
  copy_str(m->uuid, sizeof m->uuid, uuid);
  copy_str(m->profile, sizeof m->profile, profile);
}

static void reset_device(fake_device *d) {
  memset(d, 0, sizeof *d);
  d->magic = HANDLE_MAGIC_GPU;
  d->present = 1;
  d->minor = d->total = d->reserved = d->used = FAKE_UNSET;
  d->utilGpu = d->utilMem = d->tempC = d->powerMw = d->powerLimitMw = d->computeMode = d->migMode = FAKE_UNSET;
  d->powerInstantMw = d->smClockMhz = d->memClockMhz = d->energyMj = FAKE_UNSET;
}

static void parse_error(char *rest) {
  if (g_fake.nerrors >= FAKE_MAX_ERRORS) return;
  fake_error *e = &g_fake.errors[g_fake.nerrors];
  char fn[64] = "", dev[16] = "";
  int code = 0, times = -1;
  if (sscanf(rest, "%63s %15s %d %d", fn, dev, &code, &times) < 3) return;
  copy_str(e->fn, sizeof e->fn, fn);
  e->device = strcmp(dev, "*") == 0 ? -1 : atoi(dev);
  e->code = code;
  e->remaining = times;
  g_fake.nerrors++;
}

static void parse_line(char *line, fake_device **cur) {
  char *s = trim(line);
  if (*s == 0 || *s == '#') return;
  char *sp = strpbrk(s, " \t");
  char *rest = sp ? trim(sp + 1) : s + strlen(s);
  if (sp) *sp = 0;
  fake_device *d = *cur;
  if (strcmp(s, "driver") == 0) copy_str(g_fake.driver, sizeof g_fake.driver, rest);
  else if (strcmp(s, "cuda") == 0) g_fake.cudaVersion = parse_num(rest);
  else if (strcmp(s, "error") == 0) parse_error(rest);
  else if (strcmp(s, "device") == 0) {
    if (g_fake.ndevices >= FAKE_MAX_DEVICES) { *cur = NULL; return; }
    *cur = &g_fake.dev[g_fake.ndevices++];
    /* Keep the process-growth state of a device across reloads: it models the driver, not the file. */
    int lateShown = (*cur)->lateShown;
    reset_device(*cur);
    (*cur)->lateShown = lateShown;
  } else if (!d) return;
  else if (strcmp(s, "uuid") == 0) copy_str(d->uuid, sizeof d->uuid, rest);
  else if (strcmp(s, "name") == 0) copy_str(d->name, sizeof d->name, rest);
  else if (strcmp(s, "pci") == 0) copy_str(d->pci, sizeof d->pci, rest);
  else if (strcmp(s, "minor") == 0) d->minor = parse_num(rest);
  else if (strcmp(s, "memory") == 0) sscanf(rest, "%lld %lld %lld", &d->total, &d->reserved, &d->used);
  else if (strcmp(s, "util") == 0) sscanf(rest, "%lld %lld", &d->utilGpu, &d->utilMem);
  else if (strcmp(s, "temp") == 0) d->tempC = parse_num(rest);
  else if (strcmp(s, "power") == 0) sscanf(rest, "%lld %lld", &d->powerMw, &d->powerLimitMw);
  else if (strcmp(s, "powerlimit") == 0) d->powerLimitMw = parse_num(rest);
  else if (strcmp(s, "powerinstant") == 0) d->powerInstantMw = parse_num(rest);
  else if (strcmp(s, "clocks") == 0) sscanf(rest, "%lld %lld", &d->smClockMhz, &d->memClockMhz);
  else if (strcmp(s, "energy") == 0) d->energyMj = parse_num(rest);
  else if (strcmp(s, "computemode") == 0) d->computeMode = parse_num(rest);
  else if (strcmp(s, "migmode") == 0) d->migMode = parse_num(rest);
  else if (strcmp(s, "status") == 0) d->status = strcmp(rest, "lost") == 0 ? DEV_LOST : strcmp(rest, "noperm") == 0 ? DEV_NOPERM : DEV_OK;
  else if (strcmp(s, "mig") == 0) parse_mig(d, rest);
  else if (strcmp(s, "process") == 0) parse_process(d, rest);
  else if (strcmp(s, "utilsample") == 0) parse_util_sample(d, rest);
}

int fake_reload(void) {
  const char *path = getenv("GPUMEM_FAKE_NVML_SCENARIO");
  struct stat st;
  /* The check (memory calls, device count and handles: once per GPU a sample) costs a path lookup, the fake's
     work, not the driver's: credited. Timed by the monotonic clock, which the vDSO serves without a system call. */
  unsigned long long checkNs = fake_monotonic_ns();
  int statRc = path ? stat(path, &st) : -1;
  fake_own_check(fake_monotonic_ns() - checkNs);
  if (statRc != 0) return g_loaded ? 0 : -1;
  if (g_loaded && st.st_ino == g_seen.st_ino && st.st_size == g_seen.st_size &&
      st.st_mtim.tv_sec == g_seen.st_mtim.tv_sec && st.st_mtim.tv_nsec == g_seen.st_mtim.tv_nsec)
    return 0;
  /* Reading the file is the fake's work, not the driver's: its CPU is taken off the next charged calls. */
  unsigned long long startNs = fake_thread_cpu_ns();
  FILE *f = fopen(path, "r");
  if (!f) return g_loaded ? 0 : -1;
  int oldCount = g_fake.ndevices;
  g_fake.ndevices = 0;
  g_fake.nerrors = 0;
  g_fake.driver[0] = 0;
  g_fake.cudaVersion = FAKE_UNSET;
  fake_device *cur = NULL;
  char line[512];
  while (fgets(line, sizeof line, f)) parse_line(line, &cur);
  fclose(f);
  /* Devices that vanished keep their slot (handles stay valid) but answer GPU_IS_LOST. */
  for (int i = g_fake.ndevices; i < oldCount; i++) g_fake.dev[i].present = 0;
  g_seen = st;
  g_loaded = 1;
  fake_own_work(fake_thread_cpu_ns() - startNs);
  return 0;
}

int fake_injected(const char *fn, int deviceIndex) {
  for (int i = 0; i < g_fake.nerrors; i++) {
    fake_error *e = &g_fake.errors[i];
    if (e->remaining == 0 || strcmp(e->fn, fn) != 0) continue;
    if (e->device != -1 && e->device != deviceIndex) continue;
    if (e->remaining > 0) e->remaining--;
    return e->code;
  }
  return NVML_SUCCESS;
}
