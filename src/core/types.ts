/**
 * The GPU state model every command reads. Sizes are integer bytes; a value that could not be read is
 * `null` and its reason sits in the owning object's `unavailable` map (field name → reason, e.g.
 * "NVML_ERROR_NOT_SUPPORTED" or "[N/A] in nvidia-smi output"). Never 0 for unknown.
 */

/** Field name → why it is null. Only fields that are null appear. */
export type Unavailable = Record<string, string>;

export interface DeviceMemory {
  /** Total framebuffer memory (nvidia-smi "FB Memory Usage / Total"). */
  totalBytes: number | null;
  /** Reserved by the driver (NVML v2 `reserved`; nvidia-smi "Reserved"). Null on pre-R510 drivers. */
  reservedBytes: number | null;
  /** Used, excluding driver-reserved memory, as nvidia-smi shows it (NVML v2 `used`). */
  usedBytes: number | null;
  /** Free (NVML `free`; nvidia-smi "Free"). */
  freeBytes: number | null;
}

export interface MigInstance {
  gpuInstanceId: number;
  /** Null for a GPU-instance-level row that has no single compute instance. */
  computeInstanceId: number | null;
  uuid: string | null;
  /** Profile name as the driver reports it, e.g. "1g.10gb". */
  profile: string | null;
  memory: DeviceMemory;
  unavailable: Unavailable;
}

export type DeviceStatus = 'ok' | 'lost' | 'no-permission' | 'error';

export interface Device {
  /** NVML index = PCI bus order = nvidia-smi index. */
  index: number;
  uuid: string | null;
  name: string | null;
  pciBusId: string | null;
  minorNumber: number | null;
  /** 'ok' unless the device could not be read; the other fields then are null with reasons. */
  status: DeviceStatus;
  memory: DeviceMemory;
  /** Percent over the driver's last sample period (nvidia-smi "Utilization / Gpu" and "Memory"). */
  utilization: { gpuPct: number | null; memoryPct: number | null };
  temperatureC: number | null;
  /** Power draw as nvidia-smi's power.draw: the averaged reading, else the instant one (pre-Ampere on new drivers). */
  powerDrawMw: number | null;
  powerLimitMw: number | null;
  /**
   * Current SM and memory clocks in MHz (nvidia-smi clocks.sm / clocks.mem). Absent from recordings and
   * sources that do not read them; null with a reason when the driver does not say.
   */
  clocks?: { smMhz: number | null; memoryMhz: number | null };
  /** Energy used since the driver was loaded, in millijoules (nvmlDeviceGetTotalEnergyConsumption); absent as above. */
  totalEnergyMj?: number | null;
  /** "Default", "Exclusive_Process", "Prohibited" … as nvidia-smi names them. */
  computeMode: string | null;
  migMode: 'enabled' | 'disabled' | null;
  migInstances: MigInstance[];
  driverVersion: string | null;
  /** CUDA driver API version as "12.8". */
  cudaDriverVersion: string | null;
  unavailable: Unavailable;
}

export type ProcessState = 'R' | 'S' | 'D' | 'Z' | 'T' | 't' | 'X' | 'I' | 'W' | 'P' | 'K';

/** What /proc says about a pid. Null fields carry their reason in `unavailable`. */
export interface HostFacts {
  /** False when the pid does not exist in our PID namespace (typical inside a container: NVML reports host pids). */
  visible: boolean;
  uid: number | null;
  user: string | null;
  ppid: number | null;
  /** argv as the process set it (/proc/PID/cmdline split on NUL). */
  cmdline: string[] | null;
  /** Target of /proc/PID/exe. */
  exe: string | null;
  /** Start time in ms since the epoch, from /proc/PID/stat field 22 and the boot time. */
  startTimeMs: number | null;
  /** Raw start time in clock ticks since boot (field 22), for exact pid-reuse checks. */
  startTicks: number | null;
  state: ProcessState | null;
  /**
   * CPU time used so far (user + system, /proc/PID/stat fields 14 + 15), in clock ticks: compared across the
   * samples of a window it tells whether the process ran. Absent in older recordings; null when unreadable.
   */
  cpuTicks?: number | null;
  /**
   * When `cpuTicks` was read (ms since the epoch), set by live samplers that re-read /proc slowly: samples
   * carrying the same reading say nothing about CPU use between them. Absent where every sample is a fresh read.
   */
  cpuTicksAtMs?: number;
  /**
   * CPU use between the two latest reads of /proc/PID/stat by a live sampler, in % of one core (200 = two
   * cores busy). Absent or null until a process has been read twice.
   */
  cpuPct?: number | null;
  /** Resident set size in host memory, bytes (/proc/PID/statm resident × page size, what VmRSS shows); live views only. */
  rssBytes?: number | null;
  /** Container id from /proc/PID/cgroup (docker, containerd, podman, k8s), or null when not in one. */
  containerId: string | null;
  /** NSpid line: the pid in each nested PID namespace, outermost first. */
  nspid: number[] | null;
  /** CUDA-relevant environment from /proc/PID/environ, when readable. */
  cudaEnv: CudaEnv | null;
  /**
   * The job the process belongs to (Slurm job, Kubernetes pod, `gpumem run`), from its cgroup and environment;
   * null when neither names one. Absent in recordings made before gpumem read it.
   */
  job?: JobFacts | null;
  unavailable: Unavailable;
}

/** A process's job, as far as its own /proc/PID/cgroup and environment tell (sources/procfs/job.ts). */
export interface JobFacts {
  /** Slurm job id: the cgroup path slurmstepd placed it in, else SLURM_JOB_ID. */
  slurmJobId: string | null;
  /** Kubernetes pod UID from the kubelet's cgroup path. */
  podUid: string | null;
  /** Pod name (POD_NAME, else HOSTNAME) and namespace (POD_NAMESPACE), for a process in a pod's cgroup only. */
  podName: string | null;
  podNamespace: string | null;
  /** GPUMEM_RUN_MARK: `SUPERVISORPID-STARTMS-HEX`, set by `gpumem run` on every process it starts. */
  runMark: string | null;
}

export interface CudaEnv {
  CUDA_VISIBLE_DEVICES?: string;
  CUDA_DEVICE_ORDER?: string;
  PYTORCH_CUDA_ALLOC_CONF?: string;
  PYTORCH_ALLOC_CONF?: string;
  /** The rank environment a distributed launcher sets: a process's role in its job. */
  RANK?: string;
  LOCAL_RANK?: string;
  WORLD_SIZE?: string;
}

export type GpuProcessKind = 'compute' | 'graphics' | 'compute+graphics';

export interface GpuProcess {
  /** The pid as NVML/nvidia-smi report it (the host's PID namespace). */
  pid: number;
  gpuUuid: string | null;
  gpuIndex: number | null;
  /** MIG GPU/compute instance ids when the process runs on a MIG slice. */
  gpuInstanceId: number | null;
  computeInstanceId: number | null;
  /** Memory the process holds on that GPU; null when the driver says "not available" (e.g. WDDM, some containers). */
  usedBytes: number | null;
  kind: GpuProcessKind;
  /** Process name as the GPU source reports it (nvidia-smi `process_name`), when it does. */
  name: string | null;
  /** SM utilization of this process: the mean of the driver's samples taken since the previous read (NVML), when there are any. */
  smUtilPct: number | null;
  /** Facts from /proc; null until enriched. */
  host: HostFacts | null;
  unavailable: Unavailable;
}

export type SourceKind = 'nvml' | 'smi' | 'replay';

export interface SampleSource {
  kind: SourceKind;
  /** Where it came from: the library path, the nvidia-smi command, or the recording file. */
  detail: string;
  /** Set when the data is not from this machine's GPUs right now (a recording, a bundled example). */
  note?: string;
}

export interface Sample {
  /** Milliseconds since the epoch when the sample was taken. */
  timeMs: number;
  source: SampleSource;
  devices: Device[];
  processes: GpuProcess[];
  unavailable: Unavailable;
}
