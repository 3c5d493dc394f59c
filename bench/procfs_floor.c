/*
 * The floor for gpumem's per-sample /proc reading (bench/procfs.bench.ts): what the same work costs in C
 * with nothing in the way. Each /proc/PID/stat is opened once and held; every round pread()s each file from
 * offset 0 into one buffer and parses the fields gpumem's steady sample parses (src/sources/procfs/parse.ts):
 * pid, comm (between the first "(" and the last ")", copied out), state (3), ppid (4), pgid (5), utime (14),
 * stime (15) and starttime (22). Nothing else is read per sample.
 *
 *   procfs_floor ROUNDS WARMUP < pids      (pids separated by whitespace)
 *
 * Prints one line of JSON: files held, stat lines parsed, CPU nanoseconds per round (user + system of this process,
 * CLOCK_PROCESS_CPUTIME_ID, warm-up rounds excluded), and checksums of the parsed fields so the benchmark can
 * check that gpumem read the same values from the same processes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct stat_fields {
  long pid;
  char comm[64];
  size_t comm_len;
  char state;
  long ppid, pgid;
  unsigned long long utime, stime, starttime;
};

/* Parses one stat line the way parse.ts does: fields after the comm are counted from the last ")". */
static int parse_stat(const char *text, size_t len, struct stat_fields *out) {
  const char *open = memchr(text, '(', len);
  const char *close = NULL;
  for (const char *p = text + len; p > text; p--)
    if (p[-1] == ')') { close = p - 1; break; }
  if (!open || !close || close < open) return 0;
  out->pid = strtol(text, NULL, 10);
  size_t comm_len = (size_t)(close - open - 1);
  if (comm_len >= sizeof out->comm) comm_len = sizeof out->comm - 1;
  memcpy(out->comm, open + 1, comm_len);
  out->comm[comm_len] = '\0';
  out->comm_len = comm_len;
  const char *p = close + 1, *end = text + len;
  int field = 2;
  while (p < end && field < 22) {
    while (p < end && (*p == ' ' || *p == '\n')) p++;
    if (p >= end) break;
    field++;
    if (field == 3) out->state = *p;
    else if (field == 4 || field == 5 || field == 14 || field == 15 || field == 22) {
      unsigned long long v = 0;
      while (p < end && *p >= '0' && *p <= '9') v = v * 10 + (unsigned long long)(*p++ - '0');
      if (field == 4) out->ppid = (long)v;
      else if (field == 5) out->pgid = (long)v;
      else if (field == 14) out->utime = v;
      else if (field == 15) out->stime = v;
      else out->starttime = v;
    }
    while (p < end && *p != ' ' && *p != '\n') p++;
  }
  return field >= 22;
}

static long long cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: procfs_floor ROUNDS WARMUP < pids\n");
    return 2;
  }
  long rounds = strtol(argv[1], NULL, 10), warmup = strtol(argv[2], NULL, 10);
  /* Hold every file, as the floor should: take the hard limit if the soft one is lower. */
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  size_t cap = 1024, n = 0;
  int *fds = malloc(cap * sizeof *fds);
  long pid;
  char path[64];
  while (scanf("%ld", &pid) == 1) {
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      fprintf(stderr, "procfs_floor: cannot open %s after %zu files: ", path, n);
      perror(NULL);
      return 1;
    }
    if (n == cap) fds = realloc(fds, (cap *= 2) * sizeof *fds);
    fds[n++] = fd;
  }
  char buf[4096];
  struct stat_fields f;
  /* Every parsed field goes into a checksum, so none of the parsing can be optimised away. */
  unsigned long long sum_start = 0, sum_ppid = 0, sum_pgid = 0, sum_cpu = 0, sum_comm = 0;
  size_t parsed = 0, zombies = 0;
  long long from = 0;
  for (long r = 0; r < warmup + rounds; r++) {
    if (r == warmup) from = cpu_ns();
    parsed = zombies = 0;
    sum_start = sum_ppid = sum_pgid = sum_cpu = sum_comm = 0;
    for (size_t i = 0; i < n; i++) {
      ssize_t got = pread(fds[i], buf, sizeof buf, 0);
      if (got <= 0 || !parse_stat(buf, (size_t)got, &f)) continue;
      parsed++;
      sum_start += f.starttime;
      sum_ppid += (unsigned long long)f.ppid;
      sum_pgid += (unsigned long long)f.pgid + (unsigned long long)f.pid;
      sum_cpu += f.utime + f.stime;
      sum_comm += f.comm_len + (unsigned char)f.comm[0];
      zombies += f.state == 'Z';
    }
  }
  long long per_round = rounds > 0 ? (cpu_ns() - from) / rounds : 0;
  printf("{\"held\":%zu,\"parsed\":%zu,\"cpuNsPerRound\":%lld,\"sumStartTicks\":%llu,\"sumPpid\":%llu,"
         "\"sumPgidPid\":%llu,\"sumCpuTicks\":%llu,\"sumComm\":%llu,\"zombies\":%zu}\n",
         n, parsed, per_round, sum_start, sum_ppid, sum_pgid, sum_cpu, sum_comm, zombies);
  return 0;
}
