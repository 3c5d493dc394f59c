/** server/: HTTP app, dashboard assets, JSON API, /metrics. Imports core/, sources/, store/, supervise/, orchestrate/. */
export {};
