/** Recordings on disk: the writer (the reader is sources/replay, so every command can replay). */
export { createRecordingWriter, currentHostInfo, type RecordingWriter, type RecordingWriterOptions } from './writer.js';
