/**
 * The module specifiers a TypeScript file imports (static, re-exported, side-effect and literal dynamic
 * imports), read from its text. One reader for the layer rules and for sorting the suite into tiers.
 */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

/** Every specifier `text` imports, in order. */
export function importsIn(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(IMPORT)) found.push((m[1] ?? m[2] ?? m[3]) as string);
  return found;
}
