/** A ServerResponse stand-in for the event hub's tests: its socket is full or not, as the test says. */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

export class Socketish extends EventEmitter {
  writableNeedDrain = false;
  written: string[] = [];
  destroyed = false;
  writeHead(): this { return this; }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.written.push(chunk);
    return !this.writableNeedDrain;
  }
  end(): void {}
  destroy(): void {
    this.destroyed = true;
  }
}

export const asRes = (s: Socketish): ServerResponse => s as unknown as ServerResponse;
