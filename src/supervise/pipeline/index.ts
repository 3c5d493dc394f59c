/** `gpumem pipeline`: the file format (validated up front) and the stage runner. */
export { parsePipeline, splitCommand, type PipelineSpec, type StageSpec } from './parse.js';
export { runPipeline, resolveStageGpus, PIPELINE_SCHEMA_VERSION, type PipelineReport, type StageReport, type StageCheck, type PipelineOptions } from './run.js';
export { pipelineReportJson, type PipelineReportJson } from './json.js';
