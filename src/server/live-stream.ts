/**
 * What the open pages receive per sample over server-sent events. On a busy machine the process table is
 * most of a message (512 rows are ~57 KB) and it rarely changes from one sample to the next, so a message
 * carries `view.processes` and `view.findings` only when they differ from the previous message's: a page
 * keeps what it has otherwise. A stream's first message carries everything the page needs to draw at once
 * (server facts and the chart history too), so opening the page costs one request after its files; a
 * client that missed a message (it was still draining) gets a complete one next.
 */
import type { Sample } from '../core/types.js';
import type { EventHub } from './http/events.js';
import { eventFrame } from './http/events.js';
import { liveRow } from './live-row.js';
import type { ServerState } from './state.js';
import { sameRows } from './sample-change.js';
import type { LiveMessage } from './page-docs.js';
import { findingsView, headView, processesView } from './view.js';

export interface ServerFacts {
  readonly: boolean;
}

/** The parts of one sample's message, each already JSON. */
interface Parts {
  sample: Sample;
  live: string;
  /** The view without processes and findings, as an object body without its closing brace. */
  viewHead: string;
  processes: string;
  findings: string;
}

export class LiveStream {
  private sent: { processes: string; findings: string } | null = null;
  private latest: Parts | null = null;

  constructor(private readonly state: ServerState, private readonly events: EventHub, private readonly facts: ServerFacts) {}

  /** The first message of a new stream: server facts, chart history and the complete view; null before any sample. */
  first(): string | null {
    const parts = this.partsFor(this.state.latest());
    if (!parts) return null;
    // The next delta is measured against what the pages already open were sent: with none open it is this
    // message; otherwise, when they were sent something else, the next message is complete for everyone.
    if (this.events.size === 0) this.sent = { processes: parts.processes, findings: parts.findings };
    else if (this.sent && (this.sent.processes !== parts.processes || this.sent.findings !== parts.findings)) this.sent = null;
    const server = JSON.stringify({ hostname: this.state.hostname, readonly: this.facts.readonly } satisfies LiveMessage['server']);
    const history = JSON.stringify(this.state.liveRows());
    return eventFrame('sample', `{"server":${server},"history":${history},${body(parts, true, true)}}`);
  }

  /** Sends the new sample to every open page: the changed parts, or everything to a client that fell behind. */
  broadcast(sample: Sample): void {
    if (this.events.size === 0) {
      // Nobody saw the previous message: the next first() is complete anyway, and the next broadcast is too.
      this.sent = null;
      return;
    }
    const parts = this.partsFor(sample);
    if (!parts) return;
    const withProcesses = this.sent === null || this.sent.processes !== parts.processes;
    const withFindings = this.sent === null || this.sent.findings !== parts.findings;
    this.sent = { processes: parts.processes, findings: parts.findings };
    this.events.broadcast('sample', `{${body(parts, withProcesses, withFindings)}}`, () => `{${body(parts, true, true)}}`);
  }

  private partsFor(sample: Sample | undefined): Parts | null {
    if (!sample) return null;
    // The findings change on their own (a diagnosis finishing); the rest only with the sample.
    const findings = JSON.stringify(findingsView(this.state.diagnosisSoon()?.findings ?? null));
    const previous = this.latest;
    let parts = previous;
    if (parts?.sample !== sample) {
      parts = {
        sample,
        live: JSON.stringify(liveRow(sample)),
        viewHead: JSON.stringify(headView(sample)).slice(0, -1),
        // Most samples show the same rows: reuse their text rather than rebuild 512 rows to compare.
        processes: previous && sameRows(previous.sample, sample) ? previous.processes : JSON.stringify(processesView(sample, this.state.ancestorsOf(sample))),
        findings,
      };
      this.latest = parts;
    }
    parts.findings = findings;
    return parts;
  }
}

/** `"live":…,"view":{…}` with the optional parts: the body of a LiveMessage (page-docs.ts), assembled from its parts' JSON. */
function body(p: Parts, withProcesses: boolean, withFindings: boolean): string {
  let view = p.viewHead;
  if (withProcesses) view += `,"processes":${p.processes}`;
  if (withFindings) view += `,"findings":${p.findings}`;
  return `"live":${p.live},"view":${view}}`;
}
