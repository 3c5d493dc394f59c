import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCmdline, parseContainerId, parseCudaEnv, parsePasswd, parseProcStat, parseStatmResidentPages, statusNumbers } from '../../../src/sources/procfs/index.js';

const statLine = (comm: string, state = 'S', ppid = 1, start = 12345): string =>
  // Fields 14 and 15 (utime 1, stime 2) give cpuTicks 3.
  `4242 (${comm}) ${state} ${ppid} 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 ${start} 1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0`;

describe('parseProcStat', () => {
  it('reads fields after the last ")" so comm may hold spaces and parentheses', () => {
    expect(parseProcStat(statLine('a) (b c) S 9 9'))).toEqual({ pid: 4242, comm: 'a) (b c) S 9 9', state: 'S', ppid: 1, pgid: 4242, startTicks: 12345, cpuTicks: 3 });
  });
  it('any comm round-trips (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 15 }).filter((s) => !s.includes('\n')), fc.constantFrom('R', 'S', 'D', 'Z'), fc.nat(), fc.nat(), (comm, state, ppid, start) => {
        expect(parseProcStat(statLine(comm, state, ppid, start))).toEqual({ pid: 4242, comm, state, ppid, pgid: 4242, startTicks: start, cpuTicks: 3 });
      }),
    );
  });
  it('reads the same fields whatever whitespace separates them (property)', () => {
    const fields = statLine('x').slice(statLine('x').indexOf(')') + 2).split(' ');
    fc.assert(
      fc.property(fc.array(fc.constantFrom(' ', '  ', '\t', ' \n'), { minLength: fields.length, maxLength: fields.length }), (gaps) => {
        const text = `4242 (x)${fields.map((f, i) => `${gaps[i]}${f}`).join('')}\n`;
        expect(parseProcStat(text)).toEqual({ pid: 4242, comm: 'x', state: 'S', ppid: 1, pgid: 4242, startTicks: 12345, cpuTicks: 3 });
      }),
    );
  });
  it('garbage gives null', () => {
    expect(parseProcStat('')).toBeNull();
    expect(parseProcStat('12 (x) S')).toBeNull();
  });
});

describe('parseStatmResidentPages', () => {
  it('reads the second field', () => {
    expect(parseStatmResidentPages('2187 457 415 4 0 77 0\n')).toBe(457);
  });
  it('anything else gives null, never a guess (property)', () => {
    expect(parseStatmResidentPages('')).toBeNull();
    expect(parseStatmResidentPages('12 -3 4')).toBeNull();
    fc.assert(fc.property(fc.string(), (text) => {
      const pages = parseStatmResidentPages(text);
      expect(pages === null || (Number.isSafeInteger(pages) && pages >= 0)).toBe(true);
    }));
  });
});

describe('parseContainerId', () => {
  const id = 'a'.repeat(12) + '0123456789abcdef'.repeat(3) + 'b'.repeat(4);
  it.each([
    ['docker cgroup v1', `12:memory:/docker/${id}`],
    ['docker cgroup v2 systemd', `0::/system.slice/docker-${id}.scope`],
    ['containerd k8s', `0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1_2.slice/cri-containerd-${id}.scope`],
    ['k8s cgroupfs', `11:cpu:/kubepods/besteffort/pod0a1b/${id}`],
    ['podman', `0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-${id}.scope/container`],
    ['cri-o', `0::/kubepods.slice/crio-${id}.scope`],
  ])('%s', (_, line) => {
    expect(id).toHaveLength(64);
    expect(parseContainerId(`1:name=systemd:/\n${line}\n`)).toBe(id);
  });
  it('host processes have none', () => {
    expect(parseContainerId('0::/user.slice/user-1000.slice/session-3.scope\n')).toBeNull();
    expect(parseContainerId('4:memory:/process_api/eb0955abe693394fe96622cb32d638a1\n0::/\n')).toBeNull();
  });
});

describe('small /proc formats', () => {
  it('status lines', () => {
    const status = 'Name:\tpython\nUid:\t1000\t1000\t1000\t1000\nNSpid:\t8123\t12\n';
    expect(statusNumbers(status, 'Uid')).toEqual([1000, 1000, 1000, 1000]);
    expect(statusNumbers(status, 'NSpid')).toEqual([8123, 12]);
    expect(statusNumbers(status, 'Gid')).toBeNull();
  });
  it('passwd, environ, cmdline', () => {
    expect(parsePasswd('root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/bash\n# junk\n').get(1000)).toBe('alice');
    expect(parseCudaEnv('PATH=/bin\0CUDA_VISIBLE_DEVICES=2,3\0PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\0')).toEqual({
      CUDA_VISIBLE_DEVICES: '2,3', PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True',
    });
    expect(parseCmdline('python\0train.py\0--lr=1 2\0')).toEqual(['python', 'train.py', '--lr=1 2']);
    expect(parseCmdline('')).toBeNull();
  });
});
