/** Recordings: the NDJSON format and the reader/replay source (the writer lives in store/recording). */
export { RECORDING_FORMAT, RECORDING_VERSION, parseRecordingHeader, parseRecordedSample, parseRecordingLine, type RecordingHeader, type RecordingHostInfo } from './format.js';
export { createHostFactsEncoder, createHostFactsDecoder, HOST_FACTS_KEY, type HostFactsEncoder, type HostFactsDecoder, type HostRef, type EncodedSample } from './host-table.js';
export { isReplaySource, openReplaySource, readRecording, type Recording, type ReplaySource } from './reader.js';
