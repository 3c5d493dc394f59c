/** Paths and loaders for the generated snapshot fixtures (written by the setup step into build/snapshot). */
import { readFileSync, readdirSync } from 'node:fs';
import { buildReport, readSnapshot, unpickle, type MemorySnapshot, type SnapshotReport } from '../../../src/core/snapshot/index.js';
import { SNAPSHOT_FIXTURES } from '../../setup/snapshot-fixtures.js';

export const DIR = SNAPSHOT_FIXTURES;

export interface ExpectedDevice {
  reservedBytes: number;
  allocatedBytes: number;
  activeBytes: number;
  requestedBytes: number;
  inactiveBytes: number;
  segmentCount: number;
  blockCount: number;
  pools: Record<string, { freeBytes: number; largestFreeBytes: number }>;
  request: { bytes: number; fits: boolean; unusableFreeBytes: number };
  sitesNow: Record<string, [number, number]>;
  peak: { allocatedBytes: number; eventIndex: number; sites: Record<string, [number, number]> };
  oom: { size: number; device_free: number; allocated: number; live: Record<string, [number, number]> } | null;
  traceLength: number;
}

export interface Expected {
  generation: string;
  protocol: number | string;
  requestBytes: number;
  devices: Record<string, ExpectedDevice>;
}

/** Names of the generated snapshots that come with expected numbers ("current-p4", …). */
export function fixtureNames(): string[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.expected.json') && f !== 'diff.expected.json')
    .map((f) => f.replace('.expected.json', ''))
    .sort();
}

export function loadFixture(name: string): { bytes: Uint8Array; snapshot: MemorySnapshot; expected: Expected } {
  const bytes = readFileSync(`${DIR}/${name}.pickle`);
  const expected = JSON.parse(readFileSync(`${DIR}/${name}.expected.json`, 'utf8')) as Expected;
  return { bytes, snapshot: readSnapshot(unpickle(bytes), bytes.length), expected };
}

export function reportOf(name: string, top = 100): { report: SnapshotReport; expected: Expected } {
  const { snapshot, expected } = loadFixture(name);
  return { report: buildReport(snapshot, { top, requestBytes: expected.requestBytes }), expected };
}

/** Expected site map → sorted [site, bytes, count] rows, comparable with SiteTotal lists. */
export function siteRows(sites: Record<string, [number, number]>): Array<[string, number, number]> {
  return Object.entries(sites)
    .map(([site, [bytes, count]]) => [site, bytes, count] as [string, number, number])
    .sort((a, b) => a[0].localeCompare(b[0]));
}
