/**
 * Who holds memory: live bytes grouped by allocation site, and what grew between two snapshots. Site keys
 * are cached per frame list, since PyTorch shares one list between many entries of the same stack.
 */
import { siteOf } from './frames.js';

export interface SiteTotal {
  site: string;
  bytes: number;
  count: number;
}

export interface SiteDelta {
  site: string;
  bytesBefore: number;
  bytesAfter: number;
  deltaBytes: number;
  countBefore: number;
  countAfter: number;
}

/** Accumulates sizes by site; call add() per live item and list() for the sorted totals. */
export class SiteTally {
  private readonly totals = new Map<string, SiteTotal>();
  private readonly cache = new WeakMap<readonly unknown[], string>();

  add(frames: readonly unknown[], bytes: number): void {
    let site = this.cache.get(frames);
    if (site === undefined) {
      site = siteOf(frames);
      this.cache.set(frames, site);
    }
    this.addSite(site, bytes);
  }

  addSite(site: string, bytes: number, count = 1): void {
    const t = this.totals.get(site);
    if (t) {
      t.bytes += bytes;
      t.count += count;
    } else this.totals.set(site, { site, bytes, count });
  }

  /** Sites by bytes, largest first (ties by name, so output is stable). */
  list(): SiteTotal[] {
    return [...this.totals.values()].sort((a, b) => b.bytes - a.bytes || a.site.localeCompare(b.site));
  }
}

/** Per-site change from `before` to `after`, largest growth first; sites present in only one side count as 0 in the other. */
export function diffSites(before: readonly SiteTotal[], after: readonly SiteTotal[]): SiteDelta[] {
  const rows = new Map<string, SiteDelta>();
  const row = (site: string): SiteDelta => {
    let r = rows.get(site);
    if (!r) rows.set(site, (r = { site, bytesBefore: 0, bytesAfter: 0, deltaBytes: 0, countBefore: 0, countAfter: 0 }));
    return r;
  };
  for (const s of before) Object.assign(row(s.site), { bytesBefore: s.bytes, countBefore: s.count });
  for (const s of after) Object.assign(row(s.site), { bytesAfter: s.bytes, countAfter: s.count });
  for (const r of rows.values()) r.deltaBytes = r.bytesAfter - r.bytesBefore;
  return [...rows.values()].sort((a, b) => b.deltaBytes - a.deltaBytes || a.site.localeCompare(b.site));
}
