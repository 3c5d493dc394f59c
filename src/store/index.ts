/** store/: run history (SQLite) and recordings (NDJSON). Imports core/ and sources/. */
export {};
