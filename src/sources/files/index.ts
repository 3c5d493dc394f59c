/** Input files opened by type first (regular file, FIFO; devices and folders refused), with size caps. */
export { FIFO_WRITER_WAIT_MS, fifoReader, inputKind, openInputFile, readInputBytes, type InputFileOptions, type InputKind } from './input-file.js';
