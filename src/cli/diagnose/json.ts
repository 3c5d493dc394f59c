/** The diagnose/doctor JSON document lives in core so the server's API returns the very same one. */
export { reportJson, type Fallback } from '../../core/diagnose/report-json.js';
