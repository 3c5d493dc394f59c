/**
 * Building the page's elements. Every string from the machine (process command lines, user names, findings)
 * is placed with textContent, never as markup; data comes only from this origin (Content-Security-Policy).
 */

/** An element with `text` as its text (never as markup) and an optional class. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string | number | null, className?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** A table row: strings become cells, nodes are placed as they are. */
export function row(cells: ReadonlyArray<string | Node>): HTMLTableRowElement {
  const tr = document.createElement('tr');
  for (const cell of cells) tr.append(cell instanceof Node ? cell : el('td', cell));
  return tr;
}

/** A table with a head row and body rows of text. */
export function table(head: readonly string[], rows: ReadonlyArray<ReadonlyArray<string>>): HTMLTableElement {
  const t = document.createElement('table');
  const thead = document.createElement('thead');
  thead.append(row(head.map((h) => el('th', h))));
  const tbody = document.createElement('tbody');
  tbody.append(...rows.map((r) => row(r)));
  t.append(thead, tbody);
  return t;
}

/** The page's element with this id (index.html has every one the script uses). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

/** The first element matching `selector` (index.html has every one the script uses). */
export function query<T extends Element = HTMLElement>(selector: string): T {
  return document.querySelector(selector) as T;
}

/** The JSON body of a response, typed as the document the server sends there. */
export async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/** Bytes per GiB: the charts plot GiB. */
export const GiB = 1024 * 1024 * 1024;

/** The action token from the address's fragment (`#token=…`), when the page was opened with one. */
export const token = new URLSearchParams(location.hash.slice(1)).get('token');
