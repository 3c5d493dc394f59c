/** Recordings: the NDJSON format and the reader/replay source (the writer lives in store/recording). */
export { RECORDING_FORMAT, RECORDING_VERSION, createLineDecoder, parseRecordingHeader, parseRecordedSample, parseRecordingLine, type LineDecoder, type RecordingHeader, type RecordingHostInfo } from './format.js';
export { DEFAULT_KEYFRAMES, createRecordingEncoder, type KeyframePolicy, type RecordingEncoder } from './delta-encode.js';
export { DELTA_KEY, type DeltaLine } from './delta-shape.js';
export { createHostFactsEncoder, createHostFactsDecoder, HOST_FACTS_KEY, VOLATILE_HOST_FACTS, type HostFactsEncoder, type HostFactsDecoder, type HostRef, type EncodedSample } from './host-table.js';
export { isReplaySource, openReplaySource, readRecording, type Recording, type ReplaySource } from './reader.js';
