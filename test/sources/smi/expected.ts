/**
 * Ground truth per fixture, transcribed by hand from the fixture text (MiB as nvidia-smi printed them);
 * the tests turn MiB into bytes with exact integer arithmetic. `reserved: null` = a pre-R510 driver.
 */
import { MiB } from '../../../src/core/units.js';
export { MiB };

export interface ExpectedGpu {
  uuid: string;
  total: number;
  reserved: number | null;
  used: number;
  free: number;
  /** [gpuInstanceId, computeInstanceId, total, reserved, used, free] per MIG device, MiB. */
  mig?: Array<[number, number, number, number, number, number]>;
  /** [pid, kind letter, used MiB or null]. */
  procs: Array<[number, 'C' | 'G' | 'C+G', number | null]>;
}

export interface ExpectedXml {
  file: string;
  driver: string;
  cuda: string;
  attached: number;
  gpus: ExpectedGpu[];
}

const WDDM_PIDS = [1188, 2124, 3696, 3972, 7208, 7284, 7880, 8788, 9468, 9804, 11528, 12804, 15104];
const V100 = [
  ['GPU-76098dc1-d3bc-9a1b-7ea6-f7b48837829e', 31689, 821, 31683],
  ['GPU-bbf7a241-bf9a-eb90-b2fb-d213294faf48', 29545, 2965, 29539],
  ['GPU-8f75e71c-23dd-a060-d997-4caf592954db', 29539, 2971, 29533],
  ['GPU-3181eb56-505c-8214-ba05-c132f68f89b8', 32099, 411, 32093],
  ['GPU-2aa87d54-d4ff-2900-812b-1a4b7e119583', 29517, 2993, 29511],
  ['GPU-39c3a168-9034-0b5a-223a-1042f30a9242', 32141, 369, 32135],
  ['GPU-d2446f91-171e-1b54-515d-9d9b03484ddf', 32157, 353, 32151],
  ['GPU-1d955959-c95b-4f40-2cac-100d3006ffe2', 29501, 3009, 29495],
] as const;

export const XML_EXPECTED: ExpectedXml[] = [
  {
    file: 'a100-sxm4-40gb-mig-driver-510.47.03.xml', driver: '510.47.03', cuda: '11.6', attached: 1,
    gpus: [{ uuid: 'GPU-27b94a00-ed54-5c24-b1fd-1054085de32a', total: 40960, reserved: 605, used: 38, free: 40315,
      mig: [[1, 0, 19968, 0, 19, 19948], [2, 0, 19968, 0, 19, 19948]], procs: [] }],
  },
  {
    file: 'a100-sxm4-80gb-mig-driver-535.54.03.xml', driver: '535.54.03', cuda: '12.2', attached: 4,
    gpus: [{ uuid: 'GPU-513536b6-7d19-9063-b049-1e69664bb298', total: 81920, reserved: 869, used: 50, free: 80999,
      mig: [3, 4, 5, 6].map((gi) => [gi, 0, 19968, 0, 12, 19955] as [number, number, number, number, number, number]), procs: [] }],
  },
  {
    file: 'grid-p4-1q-vgpu-wddm-procs-driver-513.46.xml', driver: '513.46', cuda: '11.6', attached: 1,
    gpus: [{ uuid: 'GPU-1b1ea7c7-1c4b-ed49-1c72-26c65f2dd207', total: 1024, reserved: 110, used: 807, free: 106,
      procs: WDDM_PIDS.map((pid) => [pid, 'C+G', null]) }],
  },
  {
    file: 'rtx-4000-sff-ada-procs-driver-595.84.xml', driver: '595.84', cuda: '13.2', attached: 1,
    gpus: [{ uuid: 'GPU-37037c3f-65c8-ec4d-24a9-420204ad8026', total: 20475, reserved: 460, used: 3534, free: 16482,
      procs: [[1842, 'G', 410], [3190, 'G', 451], [4937, 'C', 160], [34626, 'C+G', 183]] }],
  },
  {
    file: 'rtx-a5000-x2-procs-driver-590.44.01.xml', driver: '590.44.01', cuda: '13.1', attached: 2,
    gpus: [
      { uuid: 'GPU-12345678-aaaa-bbbb-cccc-0123456789ab', total: 24564, reserved: 450, used: 22437, free: 1678, procs: [[100477, 'C', 22430]] },
      { uuid: 'GPU-12345678-aaaa-bbbb-cccc-0123456789cd', total: 24564, reserved: 450, used: 17253, free: 6862, procs: [[100477, 'C', 17246]] },
    ],
  },
  {
    file: 'rtx-pro-6000-blackwell-maxq-procs-driver-590.44.01.xml', driver: '590.44.01', cuda: '13.1', attached: 1,
    gpus: [{ uuid: 'GPU-12345678-aaaa-bbbb-cccc-0123456789ab', total: 97887, reserved: 637, used: 65720, free: 31531, procs: [[116860, 'C', 65710]] }],
  },
  {
    file: 'tesla-t4-procs-driver-515.105.01.xml', driver: '515.105.01', cuda: '11.7', attached: 1,
    gpus: [{ uuid: 'GPU-d37e67a5-91dd-3774-a5cb-99096249601a', total: 15360, reserved: 388, used: 1032, free: 13939, procs: [[675, 'G', 22], [5762, 'C', 1005]] }],
  },
  {
    file: 'v100s-pcie-32gb-x8-procs-driver-460.73.01.xml', driver: '460.73.01', cuda: '11.2', attached: 8,
    gpus: V100.map(([uuid, used, free, proc]) => ({ uuid, total: 32510, reserved: null, used, free, procs: [[37305, 'C', proc]] })),
  },
];
