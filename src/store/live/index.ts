/** Files a running gpumem publishes for other gpumem processes (the live companion statistics). */
export { liveCompanionDir, liveCompanionPath, writeLiveCompanion, removeLiveCompanion, readLiveCompanion, type LiveCompanionEntry } from './companion-live.js';
