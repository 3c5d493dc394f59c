/**
 * A small XML reader for `nvidia-smi -q -x`. nvidia-smi writes plain element trees (no namespaces, no
 * CDATA, attributes only on <gpu id=…>), so a full XML library is not needed — but the reader must never
 * hang or crash on truncated or mangled output, and must say where it stopped making sense.
 */
import { GpumemError } from '../../core/errors.js';
import { nameRecord } from '../../core/records.js';

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Concatenated, trimmed, entity-decoded text directly inside this element. */
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(raw: string): string {
  return raw.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (whole, body: string) => {
    if (body.startsWith('#x')) return safeCodePoint(parseInt(body.slice(2), 16)) ?? whole;
    if (body.startsWith('#')) return safeCodePoint(parseInt(body.slice(1), 10)) ?? whole;
    return ENTITIES[body] ?? whole;
  });
}

function safeCodePoint(code: number): string | undefined {
  return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}

function malformed(what: string, offset: number, text: string, where: string): GpumemError {
  const line = text.slice(0, offset).split('\n').length;
  return new GpumemError('INPUT_MALFORMED', `${where}: ${what} (line ${line})`, {
    hint: 'nvidia-smi output looks truncated or corrupted; run `nvidia-smi -q -x` by hand to check it',
    details: { line, offset },
  });
}

const NAME = /^[A-Za-z_][\w.:-]*/;
const ATTR = /\s*([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;

/**
 * Parses XML text into its root element. Prolog, DOCTYPE, comments and processing instructions are
 * skipped. Throws GpumemError('INPUT_MALFORMED') naming the element left open, the mismatched close tag
 * or the stray text, with its line; `where` names the input in that message.
 */
export function parseXml(text: string, where = 'nvidia-smi XML'): XmlElement {
  const stack: XmlElement[] = [];
  const texts: string[][] = [];
  let root: XmlElement | null = null;
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = text.slice(i, lt < 0 ? text.length : lt);
    if (chunk.trim() !== '') {
      if (stack.length === 0) throw malformed(`text outside the root element: "${chunk.trim().slice(0, 30)}"`, i, text, where);
      texts[texts.length - 1]!.push(chunk);
    }
    if (lt < 0) break;
    i = lt;
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end < 0) throw malformed('comment never closed', i, text, where);
      i = end + 3;
      continue;
    }
    if (text.startsWith('<?', i) || text.startsWith('<!', i)) {
      const end = text.indexOf('>', i + 2);
      if (end < 0) throw malformed('declaration never closed', i, text, where);
      i = end + 1;
      continue;
    }
    const gt = text.indexOf('>', i + 1);
    if (gt < 0) throw malformed('tag cut off', i, text, where);
    const inner = text.slice(i + 1, gt);
    if (inner.startsWith('/')) {
      const name = inner.slice(1).trim();
      const open = stack.pop();
      if (!open) throw malformed(`close tag </${name}> without an open element`, i, text, where);
      if (open.name !== name) throw malformed(`<${open.name}> closed by </${name}>`, i, text, where);
      open.text = decode((texts.pop() ?? []).join('').trim());
      if (stack.length === 0) root = open;
    } else {
      const selfClosing = inner.endsWith('/');
      const body = selfClosing ? inner.slice(0, -1) : inner;
      const name = NAME.exec(body)?.[0];
      if (!name) throw malformed(`bad tag "<${inner.slice(0, 30)}>"`, i, text, where);
      if (stack.length === 0 && root !== null) throw malformed('a second root element', i, text, where);
      const element: XmlElement = { name, attrs: parseAttrs(body.slice(name.length), i, text, where), children: [], text: '' };
      if (stack.length > 0) stack[stack.length - 1]!.children.push(element);
      if (selfClosing) {
        if (stack.length === 0) root = element;
      } else {
        stack.push(element);
        texts.push([]);
      }
    }
    i = gt + 1;
  }
  if (stack.length > 0) {
    const path = stack.map((e) => e.name).join(' > ');
    throw malformed(`output ends inside <${stack[stack.length - 1]!.name}> (open: ${path})`, text.length, text, where);
  }
  if (!root) throw malformed('no root element', 0, text, where);
  return root;
}

function parseAttrs(rest: string, offset: number, text: string, where: string): Record<string, string> {
  const attrs = nameRecord<string>();
  ATTR.lastIndex = 0;
  let pos = 0;
  while (pos < rest.length) {
    if (rest.slice(pos).trim() === '') break;
    ATTR.lastIndex = pos;
    const m = ATTR.exec(rest);
    if (!m) throw malformed(`bad attribute near "${rest.slice(pos, pos + 30).trim()}"`, offset, text, where);
    attrs[m[1]!] = decode(m[2] ?? m[3] ?? '');
    pos = ATTR.lastIndex;
  }
  return attrs;
}

/** The first child element named `name`, or undefined. */
export function child(element: XmlElement | undefined, name: string): XmlElement | undefined {
  return element?.children.find((c) => c.name === name);
}

/** All child elements named `name`. */
export function childrenNamed(element: XmlElement | undefined, name: string): XmlElement[] {
  return element ? element.children.filter((c) => c.name === name) : [];
}

/** Text at a path of child names (`textAt(gpu, 'fb_memory_usage', 'total')`), or undefined when absent. */
export function textAt(element: XmlElement | undefined, ...path: string[]): string | undefined {
  let node = element;
  for (const name of path) node = child(node, name);
  return node?.text;
}
