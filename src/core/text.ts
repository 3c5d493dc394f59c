/**
 * Making text from outside printable. Command lines of other users' processes, frame and tensor names in
 * files, companion messages and OOM text echoed back may hold control characters: an escape sequence can
 * retitle or clear the terminal or forge a hyperlink, and a newline can forge a whole row of a table. Every
 * renderer (text, tables, the live view, HTML) passes such strings through `printable` before laying them
 * out, so what a person sees is exactly what the process or file contains, made visible.
 */

/** Characters that move the cursor, switch terminal modes, break lines or reorder text when printed raw. */
// C0 controls, DEL, C1 controls, the Unicode line/paragraph separators and the bidirectional overrides.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u001b': '\\e' };

function escapeOne(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Returns `text` with every control character shown escaped (`\n`, `\e`, `\x07`, `\u202e`), so the result
 * occupies one line and cannot change the terminal's state. Printable text, including non-ASCII letters,
 * is unchanged; `null` and `undefined` become the empty string.
 */
export function printable(text: string | null | undefined): string {
  if (text === null || text === undefined) return '';
  return text.replace(UNPRINTABLE, escapeOne);
}

/** True when `printable(text)` would change nothing. */
export function isPrintable(text: string): boolean {
  UNPRINTABLE.lastIndex = 0;
  const found = UNPRINTABLE.test(text);
  UNPRINTABLE.lastIndex = 0;
  return !found;
}
