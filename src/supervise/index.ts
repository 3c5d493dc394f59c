/** supervise/: spawning and watching user commands, pipelines, retry, cleanup, kill. Imports core/, sources/, store/. */
export {};
