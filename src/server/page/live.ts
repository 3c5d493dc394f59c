/**
 * The live view. One stream feeds it: its first message has the server's facts, the chart history and the
 * whole view; later ones leave out the process table and the findings when they did not change.
 */
import type { ErrorDoc, FindingView, KillDoc, LiveMessage, PageView, ProcessRowView } from '../page-docs.js';
import { addLive, drawCharts, newestTime, resetSeries } from './charts.js';
import { byId, el, json, query, row, token } from './dom.js';

/** Until the server says otherwise, the page offers no actions. */
let readonly = true;

async function killPid(pid: number, button: HTMLButtonElement): Promise<void> {
  if (!confirm(`End process ${pid}? (SIGTERM, then SIGKILL)`)) return;
  button.disabled = true;
  const res = await fetch(`/api/v1/processes/${pid}/kill`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  const doc = await json<Partial<KillDoc & ErrorDoc>>(res).catch((): Partial<KillDoc & ErrorDoc> => ({}));
  const outcome = (doc.outcomes || []).map((o) => `${o.outcome}: ${o.detail}`).join('; ') || (doc.error && doc.error.message) || res.statusText;
  button.replaceWith(el('span', outcome, 'muted'));
}

function showView(view: PageView): void {
  byId('source').textContent = `via ${view.source.kind}${view.source.note ? ` (${view.source.note})` : ''}`;
  byId('updated').textContent = new Date(view.timeMs).toLocaleTimeString();
  byId('gpus').replaceChildren(...view.gpus.map((g) => {
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

function showProcesses(processes: readonly ProcessRowView[]): void {
  query('#processes tbody').replaceChildren(...processes.map((p) => {
    const action = el('td');
    // Only the process a job hangs from is offered: a rank or worker of a live job is never ended alone.
    if (!readonly && token && p.visible && p.endable) {
      const button = el('button', 'end');
      button.addEventListener('click', () => void killPid(p.pid, button));
      action.append(button);
    }
    const cmd = el('td', p.command, 'cmd');
    cmd.style.paddingLeft = `${p.depth * 1.2}em`;
    const tr = row([p.role === 'launcher' ? '' : p.gpu === null ? '?' : String(p.gpu), String(p.pid), p.user, el('td', p.memText, 'num'), p.role, cmd, p.container, action]);
    tr.dataset.pid = String(p.pid);
    return tr;
  }));
}

function showFindings(list: readonly FindingView[] | null): void {
  const findings = byId('findings');
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

/** Opens the stream of samples and keeps the live view up to date. */
export function startLive(): void {
  const events = new EventSource('/api/v1/events');
  let first = true;
  events.addEventListener('sample', (e) => {
    // Marks for the benchmark's account of the first render (navigation → first message → drawn).
    if (first) performance.mark('gpumem-first-message');
    const msg = JSON.parse((e as MessageEvent<string>).data) as LiveMessage;
    if (msg.server) {
      readonly = msg.server.readonly;
      byId('host').textContent = msg.server.hostname;
    }
    if (msg.history) {
      resetSeries();
      for (const s of msg.history) addLive(s);
    }
    // The history's newest point may be this very sample.
    if (newestTime() !== msg.live.timeMs / 1000) addLive(msg.live);
    showView(msg.view);
    drawCharts();
    if (first) performance.mark('gpumem-first-render');
    first = false;
  });
  events.addEventListener('error', () => {
    byId('updated').textContent = 'disconnected, retrying…';
  });
}
