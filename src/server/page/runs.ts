/** The Runs view: the history's runs and pipelines, one run's timeline and details, two runs compared. */
import type { ErrorDoc, PageCompareDoc, PageRunsDoc, PageSplitDoc, PageStepsDoc, RunSamplesDoc, RunSnapshotsDoc } from '../page-docs.js';
import { chartLibrary } from './charts.js';
import { byId, el, GiB, json, query, row } from './dom.js';
import { openRunSnapshot } from './snapshot.js';

type Kind = 'memory' | 'allocated' | 'reserved';
type Point = Record<Kind, Record<string, number>>;

async function showRun(id: number): Promise<void> {
  const doc = await json<RunSamplesDoc>(await fetch(`/api/v1/runs/${id}/samples`));
  byId('run-detail').hidden = false;
  byId('run-title').textContent = `Run ${id}: memory per GPU (GiB) over time`;
  // One x axis over all attempts (each after the previous one's last point); the tree's memory per GPU and,
  // where the companion ran, PyTorch allocated and reserved per GPU, which may be sampled at other times.
  const points = new Map<number, Point>();
  const kinds: Record<Kind, Set<string>> = { memory: new Set(), allocated: new Set(), reserved: new Set() };
  let offset = 0;
  for (const a of doc.attempts) {
    let last = 0;
    const put = (tMs: number, kind: Kind, bytes: Record<string, number>): void => {
      const x = (offset + tMs) / 1000;
      let point = points.get(x);
      if (!point) points.set(x, (point = { memory: {}, allocated: {}, reserved: {} }));
      for (const [uuid, b] of Object.entries(bytes)) {
        point[kind][uuid] = b / GiB;
        kinds[kind].add(uuid);
      }
      last = Math.max(last, tMs);
    };
    for (const t of a.timeline) put(t.tMs, 'memory', t.bytes);
    for (const t of a.pytorchTimeline || []) {
      put(t.tMs, 'allocated', t.allocatedBytes);
      put(t.tMs, 'reserved', t.reservedBytes);
    }
    offset += last + 1;
  }
  const times = [...points.keys()].sort((x, y) => x - y);
  const lines: Array<{ kind: Kind; uuid: string; label: string; dash: number[] | null; hue: number }> = [];
  const styles: Array<[Kind, string, number[] | null]> = [['memory', '', null], ['reserved', 'PyTorch reserved ', [6, 3]], ['allocated', 'PyTorch allocated ', [2, 3]]];
  for (const [kind, label, dash] of styles) {
    [...kinds[kind]].sort().forEach((uuid, i) => lines.push({ kind, uuid, label: `${label}${uuid}`, dash, hue: (i * 67) % 360 }));
  }
  const values = lines.map((l) => times.map((x) => points.get(x)?.[l.kind][l.uuid] ?? null));
  const target = byId('chart-run');
  target.replaceChildren();
  const lib = chartLibrary();
  if (times.length > 0 && lib !== undefined) {
    new lib({
      width: Math.max(320, target.clientWidth || 640), height: 220,
      scales: { x: { time: false } },
      series: [{ label: 's' }, ...lines.map((l) => ({ label: l.label, stroke: `hsl(${l.hue} 70% ${l.kind === 'memory' ? 45 : 30}%)`, dash: l.dash || undefined, spanGaps: true }))],
    }, [times, ...values], target);
  } else target.append(el('p', 'no timeline recorded', 'muted'));
  byId('run-ooms').replaceChildren(...doc.attempts.flatMap((a) => a.ooms.map((o) => el('li', `attempt ${a.attempt}, line ${o.line}: ${o.text}`))));
  const split = await json<PageSplitDoc>(await fetch(`/api/v1/page/runs/${id}/split`));
  const splitItems = split.splits.map((x) => el('li', `attempt ${x.attempt}, ${x.gpu}: ${x.text}`));
  // Runs recorded before the history kept the split over time have it at the peak only: say so.
  splitItems.push(el('li', split.splits.length === 0
    ? 'no PyTorch numbers: the run was not supervised with the companion'
    : split.perSample ? 'PyTorch reserved (dashed) and allocated (dotted) per GPU are drawn on the timeline above'
      : 'this run was recorded with the split at the peak only, not per sample', 'muted'));
  byId('run-split').replaceChildren(...splitItems);
  const steps = await json<PageStepsDoc>(await fetch(`/api/v1/page/runs/${id}/steps`));
  byId('run-steps').replaceChildren(...(steps.steps.length === 0
    ? [el('li', 'no step timing: the run was not supervised with the companion, or took no steps', 'muted')]
    : steps.steps.map((x) => el('li', `attempt ${x.attempt}, pid ${x.pid ?? '?'}: ${x.text}`))));
  const cmpA = byId<HTMLInputElement>('cmp-a');
  const cmpB = byId<HTMLInputElement>('cmp-b');
  if (cmpA.value !== String(id)) {
    cmpB.value = cmpA.value;
    cmpA.value = String(id);
  }
  const snaps = await json<Partial<RunSnapshotsDoc>>(await fetch(`/api/v1/runs/${id}/snapshots`));
  byId('run-snapshots').replaceChildren(...(snaps.snapshots ?? []).map((s) => {
    const li = el('li', `memory snapshot ${s.name} `);
    if (s.available) {
      const open = el('button', 'open');
      open.addEventListener('click', () => openRunSnapshot(`/api/v1/runs/${id}/snapshots/${s.index}`, `run ${id}: ${s.name}`));
      li.append(open);
    } else li.append(el('span', '(file gone)', 'muted'));
    return li;
  }));
}

async function compareRuns(): Promise<void> {
  const a = byId<HTMLInputElement>('cmp-a').value.trim();
  const b = byId<HTMLInputElement>('cmp-b').value.trim();
  const status = byId('compare-status');
  const tbody = query('#compare tbody');
  const res = await fetch(`/api/v1/page/compare?${new URLSearchParams({ a, b })}`);
  if (!res.ok) {
    status.textContent = `error: ${(await json<ErrorDoc>(res)).error.message}`;
    tbody.replaceChildren();
    return;
  }
  const doc = await json<PageCompareDoc>(res);
  status.textContent = '';
  tbody.replaceChildren(row([el('th', ''), el('th', `run ${doc.a}`), el('th', `run ${doc.b}`)]), ...doc.rows.map((r) => row(r)));
}

/** Lists the history's runs, and above them its pipelines with a link to each stage's run. */
export async function loadRuns(): Promise<void> {
  const doc = await json<PageRunsDoc>(await fetch('/api/v1/page/runs'));
  const tbody = query('#runs tbody');
  tbody.replaceChildren(...doc.runs.map((r) => {
    const tr = row([String(r.id), r.started, r.duration, r.status, r.peak, el('td', r.command, 'cmd')]);
    tr.addEventListener('click', () => void showRun(r.id));
    return tr;
  }));
  if (doc.runs.length === 0) tbody.append(row(['', 'no runs recorded yet (gpumem run -- CMD records one)']));
  // A pipeline is one row above its stages' runs; each stage links to its run.
  for (const p of [...(doc.pipelines ?? [])].reverse()) {
    const stages = el('td', null, 'cmd');
    stages.append(`pipeline ${p.name}: `);
    p.stages.forEach((s, i) => {
      const link = el('a', `${s.stage} (run ${s.runId}, ${s.status})`);
      link.href = '#runs';
      link.addEventListener('click', (e) => {
        e.preventDefault();
        void showRun(s.runId);
      });
      stages.append(...(i > 0 ? [', '] : []), link);
    });
    tbody.prepend(row([`p${p.id}`, p.started, p.duration, p.status, '', stages]));
  }
}

/** Wires the compare form. */
export function setUpRunsView(): void {
  byId('compare-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void compareRuns();
  });
}
