/** nvidia-smi: parsers for `-q -x` XML and `--query-*` CSV, and the source that spawns it. */
export { parseSmiXml, type SmiXmlResult } from './parse-xml.js';
export { parseQueryGpuCsv, parseComputeAppsCsv } from './parse-csv.js';
export { parseSmiCsv, type CsvTable, type CsvCell } from './csv.js';
export { parseXml, type XmlElement } from './xml.js';
export { openSmiSource, resolveSmiPath, runSmi, type SmiSourceOptions } from './source.js';
