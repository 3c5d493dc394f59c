/**
 * docs/explain.md names every family and framework value and every EVENT field the JSON carries, with a real
 * example per family.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { oomEventToJson, parseOomText, type OomEvent } from '../../../src/core/oom/index.js';

const doc = readFileSync(new URL('../../../docs/explain.md', import.meta.url), 'utf8');
const corpora = ['corpus-public.json', 'corpus-frameworks.json', 'corpus-fragments.json'].flatMap((name) =>
  (JSON.parse(readFileSync(new URL(`../../fixtures/oom/${name}`, import.meta.url), 'utf8')) as Array<{ text: string }>).map((e) => e.text),
);
const events: OomEvent[] = corpora.flatMap((t) => parseOomText(t));

describe('docs/explain.md', () => {
  it('names every family and framework the corpora produce, each family in a row of its own', () => {
    for (const e of events) {
      expect(doc, e.family).toMatch(new RegExp(`^\\| [^|]*\`${e.family}\``, 'm'));
      expect(doc, e.framework).toContain(`\`${e.framework}\``);
    }
  });

  it('names every EVENT field', () => {
    for (const key of Object.keys(oomEventToJson(events[0] as OomEvent, []))) expect(doc, key).toContain(`\`${key}\``);
  });
});
