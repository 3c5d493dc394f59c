/**
 * Interned stacks for trace entries. A 1 GB trace has tens of millions of entries but only thousands of
 * distinct stacks, so each entry keeps a stack id and the frame lists live once, here. Frames are
 * identified by what the site analysis reads (file name, line, function name), so the fresh frame dicts of
 * PyTorch's C++ writer and the shared ones of Python's pickler intern alike; a stack is found by walking a
 * trie (parent stack id, frame id) → stack id, one hash probe per frame and no string building.
 */
import { lineOf } from './frames.js';
import { PairMap } from './hash-maps.js';
import { isDict } from './unpickle-types.js';

/** Stack id of the empty frame list (entries recorded without context, or without `frames`). */
export const EMPTY_STACK = 0;
/** Frame id of every element the site analysis skips (not a dict, or a dict without a string filename). */
const SKIPPED_FRAME = 0;
const NO_FRAMES: readonly unknown[] = Object.freeze([]);

export class StackTable {
  /** Canonical frame list per stack id; shared by every entry (and device) with that stack. */
  readonly stacks: Array<readonly unknown[]> = [NO_FRAMES];
  private readonly frames: unknown[] = [null];
  private readonly frameByObject = new Map<object, number>();
  private readonly frameByKey = new Map<string, number>();
  private readonly stackByList = new Map<readonly unknown[], number>();
  private readonly trie = new PairMap(12);
  /** Estimated bytes held (frame dicts are counted where they were built). */
  bytes = 0;

  /** The frame id of one element of a frame list. */
  frameId(frame: unknown): number {
    if (typeof frame === 'object' && frame !== null) {
      const known = this.frameByObject.get(frame);
      if (known !== undefined) return known;
    }
    if (!isDict(frame) || typeof frame.filename !== 'string') return SKIPPED_FRAME;
    const name = frame.name;
    const key = `${frame.filename}\u0000${lineOf(frame)}\u0000${typeof name === 'string' ? `s${name}` : '-'}`;
    let id = this.frameByKey.get(key);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push(frame);
      this.frameByKey.set(key, id);
      // Only the first dict of each content is remembered by identity, so fresh duplicates can be collected.
      this.frameByObject.set(frame, id);
      this.bytes += 120 + 2 * key.length;
    }
    return id;
  }

  /** The stack made of stack `parent` followed by frame `frameId`. */
  child(parent: number, frameId: number): number {
    const known = this.trie.get(parent, frameId);
    if (known >= 0) return known;
    const id = this.stacks.length;
    const list = [...(this.stacks[parent] as readonly unknown[]), this.frames[frameId]];
    this.stacks.push(list);
    this.stackByList.set(list, id);
    this.trie.set(parent, frameId, id);
    this.bytes += 96 + 8 * list.length;
    return id;
  }

  /** The stack id of a frame list value (a canonical list from this table is recognised at once). */
  stackIdOf(list: readonly unknown[]): number {
    const known = this.stackByList.get(list);
    if (known !== undefined) return known;
    let id = EMPTY_STACK;
    for (let i = 0; i < list.length; i++) id = this.child(id, this.frameId(list[i]));
    return id;
  }
}
