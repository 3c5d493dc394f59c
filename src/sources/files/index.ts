/** Input files opened by type first (regular file, FIFO; devices and folders refused), with size caps. */
export { inputKind, openInputFile, readFifo, readInputBytes, type InputFileOptions, type InputKind } from './input-file.js';
