import { formatBytes } from '../../units.js';
import { THRESHOLDS } from '../thresholds.js';
import type { Finding, Rule } from '../types.js';

/** Memory that the device counts as used but that no listed process accounts for. */
export const unattributed: Rule = {
  id: 'unattributed',
  description: `memory used on a GPU that no listed process accounts for (≥ ${THRESHOLDS.residualMinBytes / 1024 ** 2} MiB)`,
  check(ctx) {
    const findings: Finding[] = [];
    for (const acc of ctx.accounting) {
      if (acc.residualBytes === null || acc.residualBytes < THRESHOLDS.residualMinBytes) continue;
      const unknown = acc.unknownPids.length > 0;
      findings.push({
        id: this.id,
        severity: 'warning',
        title: `${formatBytes(acc.residualBytes)} used on GPU ${acc.gpuIndex} by no listed process`,
        evidence: {
          summary:
            `used ${formatBytes(acc.usedBytes)} = processes here ${formatBytes(acc.visibleBytes)} + not visible ${formatBytes(acc.notVisibleBytes)} + unattributed ${formatBytes(acc.residualBytes)}` +
            (unknown ? `; includes pid ${acc.unknownPids.join(', ')}, whose memory the driver does not report` : ''),
          pids: acc.unknownPids,
          gpuIndexes: [acc.gpuIndex],
          bytes: acc.residualBytes,
          details: { usedBytes: acc.usedBytes, visibleBytes: acc.visibleBytes, notVisibleBytes: acc.notVisibleBytes },
        },
        fix:
          'list every holder of the device with `sudo fuser -v /dev/nvidia*` (or `sudo lsof /dev/nvidia*`): a process in another container or VM, ' +
          'a MIG slice, or a crashed process whose memory the driver has not released; if nothing holds it and it persists, only a driver reload frees it',
      });
    }
    return findings;
  },
};
