/**
 * Snapshot analysis: a run's snapshot (GET) or a chosen file (POST), with what-if allocator settings. The
 * page header tells the server the upload comes from this page (a page elsewhere cannot send it); the token,
 * when the page was opened with one, is sent too.
 */
import type { ErrorDoc, SnapshotPageDoc } from '../page-docs.js';
import { byId, el, json, table, token } from './dom.js';

/** The run snapshot chosen on the Runs page, analysed when no file is chosen. */
let snapshotRunPath: string | null = null;

function uploadHeaders(): Record<string, string> {
  const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream', 'X-Gpumem-Page': '1' };
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

const chosenFile = (): File | undefined => byId<HTMLInputElement>('snapshot-file').files?.[0];

/** Analyses the chosen file, or else the chosen run snapshot, and shows the result. */
export async function analyseSnapshot(): Promise<void> {
  const status = byId('snapshot-status');
  const result = byId('snapshot-result');
  const query = new URLSearchParams({ view: 'page' });
  for (const line of byId<HTMLTextAreaElement>('snapshot-whatif').value.split('\n')) if (line.trim()) query.append('whatIf', line.trim());
  const file = chosenFile();
  if (!file && !snapshotRunPath) {
    status.textContent = 'choose a snapshot file, or open one from a run';
    return;
  }
  status.textContent = 'analysing…';
  const res = file
    ? await fetch(`/api/v1/snapshots?${query}`, { method: 'POST', body: file, headers: uploadHeaders() })
    : await fetch(`${snapshotRunPath}?${query}`);
  if (!res.ok) {
    status.textContent = `error: ${(await json<ErrorDoc>(res)).error.message}`;
    result.replaceChildren();
    return;
  }
  const doc = await json<SnapshotPageDoc>(res);
  status.textContent = `${doc.source.name}`;
  result.replaceChildren(...doc.devices.flatMap((d) => {
    const parts: HTMLElement[] = [el('h3', `GPU ${d.device}`), table(['', ''], d.facts)];
    if (d.sites.length > 0) parts.push(el('h4', 'Where the memory is held'), table(['SITE', 'BYTES', 'BLOCKS'], d.sites));
    if (d.simulations.length > 0) parts.push(el('h4', 'Allocator simulation'), table(['SETTINGS', 'PEAK RESERVED', 'END RESERVED', 'SEGMENTS', 'OOM'], d.simulations));
    return parts;
  }));
}

/** Opens a run's snapshot (`path` under /api/v1/runs/) in the Snapshot view and analyses it. */
export function openRunSnapshot(path: string, label: string): void {
  snapshotRunPath = path;
  byId('snapshot-chosen').textContent = label;
  location.hash = '#snapshot';
  void analyseSnapshot();
}

/** Wires the Snapshot view's form. */
export function setUpSnapshotView(): void {
  byId('snapshot-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void analyseSnapshot();
  });
  byId('snapshot-file').addEventListener('change', () => {
    const file = chosenFile();
    byId('snapshot-chosen').textContent = file ? `upload: ${file.name}` : '';
  });
}
