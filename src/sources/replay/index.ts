/** Recordings: the NDJSON format and the reader/replay source (the writer lives in store/recording). */
export { RECORDING_FORMAT, RECORDING_VERSION, parseRecordingHeader, parseRecordedSample, type RecordingHeader, type RecordingHostInfo } from './format.js';
export { openReplaySource, readRecording, type Recording, type ReplaySource } from './reader.js';
