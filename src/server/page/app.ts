/**
 * gpumem's page (index.html loads it, bundled by esbuild into /assets/app.js): the live view, the Runs view
 * and the Snapshot view, chosen by the address's fragment. It reads the server's documents through the
 * types the server builds them with (../page-docs.ts).
 */
import { drawCharts } from './charts.js';
import { byId } from './dom.js';
import { startLive } from './live.js';
import { loadRuns, setUpRunsView } from './runs.js';
import { setUpSnapshotView } from './snapshot.js';

function route(): void {
  const runs = location.hash.startsWith('#runs');
  const snapshot = location.hash.startsWith('#snapshot');
  byId('live-view').hidden = runs || snapshot;
  byId('runs-view').hidden = !runs;
  byId('snapshot-view').hidden = !snapshot;
  if (runs) void loadRuns();
}

setUpRunsView();
setUpSnapshotView();
window.addEventListener('hashchange', route);
route();
startLive();
// uPlot runs after this file (both deferred): history that arrived first is drawn once it is there.
document.addEventListener('DOMContentLoaded', drawCharts);
