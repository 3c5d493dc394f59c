/** supervise/companion: the channel to the Python companion, its `gpumem run` plugin, and where the Python code ships. */
export { CompanionServer, type CompanionServerOptions } from './server.js';
export { companionPlugin, type CompanionPlugin, type CompanionPluginOptions } from './plugin.js';
export { companionReport, COMPANION_REPORT_SCHEMA_VERSION, type CompanionReport } from '../../core/companion/index.js';
export { linkCompanionOoms } from './oom-link.js';
export { splitLine, oomLine } from './live-lines.js';
export { companionPythonDir, companionSiteDir, prependPythonPath } from './python-path.js';
