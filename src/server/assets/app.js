// gpumem's page. Every string from the machine (process command lines, user names, findings) is placed
// with textContent, never as markup; data comes only from this origin (Content-Security-Policy).
'use strict';

const POINTS = 300;
const GiB = 1024 * 1024 * 1024;
const token = new URLSearchParams(location.hash.slice(1)).get('token');
let readonly = true;

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) tr.append(cell instanceof Node ? cell : el('td', cell));
  return tr;
}

// Charts: one series per GPU, the newest POINTS samples.
const series = { times: [], memory: new Map(), util: new Map() };
const charts = { memory: null, util: null, gpuCount: -1 };

function chartData(kind) {
  const keys = [...series[kind].keys()].sort((a, b) => a - b);
  return [series.times, ...keys.map((k) => series[kind].get(k))];
}

function makeChart(kind, target, keys) {
  const width = Math.max(320, target.clientWidth || 480);
  const opts = {
    width, height: 200,
    series: [{}, ...keys.map((k, i) => ({ label: `GPU ${k}`, stroke: `hsl(${(i * 67) % 360} 70% 45%)`, width: 1.5 }))],
    scales: kind === 'util' ? { y: { range: [0, 100] } } : {},
    axes: [{}, {}],
  };
  target.replaceChildren();
  return new uPlot(opts, chartData(kind), target);
}

function addLive(live) {
  series.times.push(live.timeMs / 1000);
  const seen = new Set();
  for (const d of live.devices) {
    seen.add(d.index);
    for (const kind of ['memory', 'util']) {
      if (!series[kind].has(d.index)) series[kind].set(d.index, series.times.slice(0, -1).map(() => null));
    }
    series.memory.get(d.index).push(d.usedBytes === null ? null : d.usedBytes / GiB);
    series.util.get(d.index).push(d.gpuPct);
  }
  for (const kind of ['memory', 'util']) {
    for (const [k, values] of series[kind]) if (!seen.has(k)) values.push(null);
  }
  if (series.times.length > POINTS) {
    series.times.shift();
    for (const kind of ['memory', 'util']) for (const values of series[kind].values()) values.shift();
  }
}

function drawCharts() {
  if (typeof uPlot === 'undefined') return;
  const count = series.memory.size;
  if (count !== charts.gpuCount) {
    const keys = [...series.memory.keys()].sort((a, b) => a - b);
    charts.memory = makeChart('memory', document.getElementById('chart-memory'), keys);
    charts.util = makeChart('util', document.getElementById('chart-util'), keys);
    charts.gpuCount = count;
    return;
  }
  charts.memory.setData(chartData('memory'));
  charts.util.setData(chartData('util'));
}

async function killPid(pid, button) {
  if (!confirm(`End process ${pid}? (SIGTERM, then SIGKILL)`)) return;
  button.disabled = true;
  const res = await fetch(`/api/v1/processes/${pid}/kill`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  const doc = await res.json().catch(() => ({}));
  const outcome = (doc.outcomes || []).map((o) => `${o.outcome}: ${o.detail}`).join('; ') || (doc.error && doc.error.message) || res.statusText;
  button.replaceWith(el('span', outcome, 'muted'));
}

function showView(view) {
  document.getElementById('source').textContent = `via ${view.source.kind}${view.source.note ? ` (${view.source.note})` : ''}`;
  document.getElementById('updated').textContent = new Date(view.timeMs).toLocaleTimeString();
  const gpus = document.getElementById('gpus');
  gpus.replaceChildren(...view.gpus.map((g) => {
    const card = el('div', null, 'gpu');
    card.dataset.index = String(g.index);
    card.append(el('div', `[${g.index}] ${g.name}`, 'name'));
    const bar = el('div', null, 'bar');
    const fill = el('div');
    fill.style.width = `${Math.round((g.usedFraction || 0) * 100)}%`;
    bar.append(fill);
    card.append(bar, el('div', `${g.usedText} / ${g.totalText} · util ${g.utilText} · ${g.tempText} · ${g.powerText}`, 'mem'));
    return card;
  }));
  if (view.processes !== undefined) showProcesses(view.processes);
  if (view.findings !== undefined) showFindings(view.findings);
}

function showProcesses(processes) {
  const tbody = document.querySelector('#processes tbody');
  tbody.replaceChildren(...processes.map((p) => {
    const action = el('td');
    // Only the process a job hangs from is offered: a rank or worker of a live job is never ended alone.
    if (!readonly && token && p.visible && p.endable) {
      const button = el('button', 'end');
      button.addEventListener('click', () => killPid(p.pid, button));
      action.append(button);
    }
    const cmd = el('td', p.command, 'cmd');
    cmd.style.paddingLeft = `${(p.depth || 0) * 1.2}em`;
    const tr = row([p.role === 'launcher' ? '' : p.gpu === null ? '?' : String(p.gpu), String(p.pid), p.user, el('td', p.memText, 'num'), p.role || '', cmd, p.container, action]);
    tr.dataset.pid = String(p.pid);
    return tr;
  }));
}

function showFindings(list) {
  const findings = document.getElementById('findings');
  if (list === null) {
    if (findings.childElementCount === 0) findings.append(el('li', 'diagnosing…', 'muted'));
    return;
  }
  findings.replaceChildren(...(list.length === 0 ? [el('li', 'no findings', 'muted')] : list.map((f) => {
    const li = el('li');
    li.append(el('span', f.severity.toUpperCase(), `sev-${f.severity}`), document.createTextNode(` ${f.title}`), el('div', `fix: ${f.fix}`, 'fix'));
    return li;
  })));
}

function resetSeries() {
  series.times = [];
  series.memory.clear();
  series.util.clear();
}

// One stream feeds the live view: its first message has the server's facts, the chart history and the
// whole view; later ones leave out the process table and the findings when they did not change.
function startLive() {
  const events = new EventSource('/api/v1/events');
  let first = true;
  events.addEventListener('sample', (e) => {
    // Marks for the benchmark's account of the first render (navigation → first message → drawn).
    if (first) performance.mark('gpumem-first-message');
    const msg = JSON.parse(e.data);
    if (msg.server) {
      readonly = msg.server.readonly;
      document.getElementById('host').textContent = msg.server.hostname;
    }
    if (msg.history) {
      resetSeries();
      for (const s of msg.history) addLive(s);
    }
    // The history's newest point may be this very sample.
    if (series.times[series.times.length - 1] !== msg.live.timeMs / 1000) addLive(msg.live);
    showView(msg.view);
    drawCharts();
    if (first) performance.mark('gpumem-first-render');
    first = false;
  });
  events.addEventListener('error', () => { document.getElementById('updated').textContent = 'disconnected, retrying…'; });
}

async function showRun(id) {
  const doc = await (await fetch(`/api/v1/runs/${id}/samples`)).json();
  const detail = document.getElementById('run-detail');
  detail.hidden = false;
  document.getElementById('run-title').textContent = `Run ${id}: memory per GPU (GiB) over time`;
  // One x axis over all attempts (each after the previous one's last point); the tree's memory per GPU and,
  // where the companion ran, PyTorch allocated and reserved per GPU, which may be sampled at other times.
  const points = new Map();
  const kinds = { memory: new Set(), allocated: new Set(), reserved: new Set() };
  let offset = 0;
  for (const a of doc.attempts) {
    let last = 0;
    const put = (tMs, kind, bytes) => {
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
  const lines = [];
  for (const [kind, label, dash] of [['memory', '', null], ['reserved', 'PyTorch reserved ', [6, 3]], ['allocated', 'PyTorch allocated ', [2, 3]]]) {
    [...kinds[kind]].sort().forEach((uuid, i) => lines.push({ kind, uuid, label: `${label}${uuid}`, dash, hue: (i * 67) % 360 }));
  }
  const values = lines.map((l) => times.map((x) => points.get(x)[l.kind][l.uuid] ?? null));
  const target = document.getElementById('chart-run');
  target.replaceChildren();
  if (times.length > 0 && typeof uPlot !== 'undefined') {
    new uPlot({
      width: Math.max(320, target.clientWidth || 640), height: 220,
      scales: { x: { time: false } },
      series: [{ label: 's' }, ...lines.map((l) => ({ label: l.label, stroke: `hsl(${l.hue} 70% ${l.kind === 'memory' ? 45 : 30}%)`, dash: l.dash || undefined, spanGaps: true }))],
    }, [times, ...values], target);
  } else target.append(el('p', 'no timeline recorded', 'muted'));
  const ooms = document.getElementById('run-ooms');
  ooms.replaceChildren(...doc.attempts.flatMap((a) => a.ooms.map((o) => el('li', `attempt ${a.attempt}, line ${o.line}: ${o.text}`))));
  const split = await (await fetch(`/api/v1/page/runs/${id}/split`)).json();
  const splitItems = split.splits.map((x) => el('li', `attempt ${x.attempt}, ${x.gpu}: ${x.text}`));
  // Runs recorded before the history kept the split over time have it at the peak only: say so.
  splitItems.push(el('li', split.splits.length === 0
    ? 'no PyTorch numbers: the run was not supervised with the companion'
    : split.perSample ? 'PyTorch reserved (dashed) and allocated (dotted) per GPU are drawn on the timeline above'
      : 'this run was recorded with the split at the peak only, not per sample', 'muted'));
  document.getElementById('run-split').replaceChildren(...splitItems);
  const steps = await (await fetch(`/api/v1/page/runs/${id}/steps`)).json();
  document.getElementById('run-steps').replaceChildren(...(steps.steps.length === 0
    ? [el('li', 'no step timing: the run was not supervised with the companion, or took no steps', 'muted')]
    : steps.steps.map((x) => el('li', `attempt ${x.attempt}, pid ${x.pid ?? '?'}: ${x.text}`))));
  const cmpA = document.getElementById('cmp-a');
  const cmpB = document.getElementById('cmp-b');
  if (cmpA.value !== String(id)) { cmpB.value = cmpA.value; cmpA.value = String(id); }
  const snaps = await (await fetch(`/api/v1/runs/${id}/snapshots`)).json();
  document.getElementById('run-snapshots').replaceChildren(...(snaps.snapshots ?? []).map((s) => {
    const li = el('li', `memory snapshot ${s.name} `);
    if (s.available) {
      const open = el('button', 'open');
      open.addEventListener('click', () => {
        snapshotRunPath = `/api/v1/runs/${id}/snapshots/${s.index}`;
        document.getElementById('snapshot-chosen').textContent = `run ${id}: ${s.name}`;
        location.hash = '#snapshot';
        void analyseSnapshot();
      });
      li.append(open);
    } else li.append(el('span', '(file gone)', 'muted'));
    return li;
  }));
}

async function compareRuns() {
  const a = document.getElementById('cmp-a').value.trim();
  const b = document.getElementById('cmp-b').value.trim();
  const status = document.getElementById('compare-status');
  const tbody = document.querySelector('#compare tbody');
  const res = await fetch(`/api/v1/page/compare?${new URLSearchParams({ a, b })}`);
  const doc = await res.json();
  if (!res.ok) { status.textContent = `error: ${doc.error.message}`; tbody.replaceChildren(); return; }
  status.textContent = '';
  tbody.replaceChildren(row([el('th', ''), el('th', `run ${doc.a}`), el('th', `run ${doc.b}`)]), ...doc.rows.map((r) => row(r)));
}

document.getElementById('compare-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void compareRuns();
});

// Snapshot analysis: a run's snapshot (GET) or a chosen file (POST), with what-if allocator settings.
// The page header tells the server the upload comes from this page (a page elsewhere cannot send it);
// the token, when the page was opened with one, is sent too.
function uploadHeaders() {
  const headers = { 'Content-Type': 'application/octet-stream', 'X-Gpumem-Page': '1' };
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}
let snapshotRunPath = null;

function table(head, rows) {
  const t = document.createElement('table');
  const thead = document.createElement('thead');
  thead.append(row(head.map((h) => el('th', h))));
  const tbody = document.createElement('tbody');
  tbody.append(...rows.map((r) => row(r)));
  t.append(thead, tbody);
  return t;
}

async function analyseSnapshot() {
  const status = document.getElementById('snapshot-status');
  const result = document.getElementById('snapshot-result');
  const query = new URLSearchParams({ view: 'page' });
  for (const line of document.getElementById('snapshot-whatif').value.split('\n')) if (line.trim()) query.append('whatIf', line.trim());
  const file = document.getElementById('snapshot-file').files[0];
  if (!file && !snapshotRunPath) { status.textContent = 'choose a snapshot file, or open one from a run'; return; }
  status.textContent = 'analysing…';
  const res = file
    ? await fetch(`/api/v1/snapshots?${query}`, { method: 'POST', body: file, headers: uploadHeaders() })
    : await fetch(`${snapshotRunPath}?${query}`);
  const doc = await res.json();
  if (!res.ok) { status.textContent = `error: ${doc.error.message}`; result.replaceChildren(); return; }
  status.textContent = `${doc.source.name}`;
  result.replaceChildren(...doc.devices.flatMap((d) => {
    const parts = [el('h3', `GPU ${d.device}`), table(['', ''], d.facts)];
    if (d.sites.length > 0) parts.push(el('h4', 'Where the memory is held'), table(['SITE', 'BYTES', 'BLOCKS'], d.sites));
    if (d.simulations.length > 0) parts.push(el('h4', 'Allocator simulation'), table(['SETTINGS', 'PEAK RESERVED', 'END RESERVED', 'SEGMENTS', 'OOM'], d.simulations));
    return parts;
  }));
}

document.getElementById('snapshot-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void analyseSnapshot();
});
document.getElementById('snapshot-file').addEventListener('change', () => {
  const file = document.getElementById('snapshot-file').files[0];
  document.getElementById('snapshot-chosen').textContent = file ? `upload: ${file.name}` : '';
});

async function loadRuns() {
  const doc = await (await fetch('/api/v1/page/runs')).json();
  const tbody = document.querySelector('#runs tbody');
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
      link.addEventListener('click', (e) => { e.preventDefault(); void showRun(s.runId); });
      stages.append(...(i > 0 ? [', '] : []), link);
    });
    tbody.prepend(row([`p${p.id}`, p.started, p.duration, p.status, '', stages]));
  }
}

function route() {
  const runs = location.hash.startsWith('#runs');
  const snapshot = location.hash.startsWith('#snapshot');
  document.getElementById('live-view').hidden = runs || snapshot;
  document.getElementById('runs-view').hidden = !runs;
  document.getElementById('snapshot-view').hidden = !snapshot;
  if (runs) void loadRuns();
}

window.addEventListener('hashchange', route);
route();
startLive();
// uPlot runs after this file (both deferred): history that arrived first is drawn once it is there.
document.addEventListener('DOMContentLoaded', drawCharts);
