import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plural } from '../../functions/core/base/text';
import { responseBytes } from '../../functions/core/memory/report-view';
import { type ListSection, listsHtml } from '../../functions/core/pages/report-page';

/**
 * The report page's finding lists write only the items they keep. The oracle is the page's own
 * function before that change, kept here whole: it wrote every item in full and in brief, then
 * kept what fit. The lists must be the same, byte for byte, whatever the items and the budget.
 */

interface WrittenItem {
  readonly full: string;
  readonly brief: string;
}

interface WrittenSection {
  readonly heading: string;
  readonly items: readonly WrittenItem[];
  readonly after: string;
}

/** listsHtml as it was, every item written first (the oracle). */
function listsBefore(sections: readonly WrittenSection[], budget: number): string {
  const all = sections.flatMap((section) => section.items);
  const briefSizes = all.map((item) => responseBytes(item.brief));
  let size = 1_024;
  for (const section of sections) size += responseBytes(section.heading) + responseBytes(section.after) + 32;
  for (const n of briefSizes) size += n;
  let kept = all.length;
  while (kept > 0 && size > budget) size -= briefSizes[--kept] as number;
  let full = 0;
  while (full < kept) {
    const extra = responseBytes((all[full] as WrittenItem).full) - (briefSizes[full] as number);
    if (size + extra > budget) break;
    size += extra;
    full++;
  }
  const notes: string[] = [];
  if (full < kept)
    notes.push(
      `<p class="note">${full === 0 ? 'None of the' : `The first ${full} of`} ${plural(all.length, 'item')} show registrant and links; the rest are listed briefly so the page stays within what the web function can answer. Filter to see any of them in full.</p>`,
    );
  if (kept < all.length)
    notes.push(
      `<p class="note">${all.length - kept} more items did not fit on this page: filter to find them, or see the JSON report.</p>`,
    );
  let index = 0;
  const html = sections
    .map((section) => {
      const items = section.items
        .map((item) => {
          const at = index++;
          return at >= kept ? '' : at < full ? item.full : item.brief;
        })
        .join('');
      return `${section.heading}${items ? `<ul class="items">${items}</ul>` : ''}${section.after}`;
    })
    .join('');
  return notes.join('') + html;
}

/** The same sections with items written when asked, counting what was written. */
function lazy(sections: readonly WrittenSection[]) {
  const written = { full: 0, brief: 0 };
  const lists: ListSection[] = sections.map((section) => ({
    ...section,
    items: section.items.map((item) => ({
      full: () => {
        written.full++;
        return item.full;
      },
      brief: () => {
        written.brief++;
        return item.brief;
      },
    })),
  }));
  return { lists, written };
}

/** Items of mixed sizes with characters JSON escapes or UTF-8 widens; the pool makes duplicates. */
const POOL: readonly WrittenItem[] = [
  { full: '<li class="critical">a.nl: expires "soon"\n<a href="x">Act</a></li>', brief: '<li>a.nl</li>' },
  { full: `<li class="warning">bücher.nl ${'é'.repeat(40)}</li>`, brief: '<li>bücher.nl</li>' },
  { full: `<li class="warning">${'x'.repeat(300)}</li>`, brief: `<li>${'y'.repeat(90)}</li>` },
  { full: '<li>tab\there \\ 🎉</li>', brief: '<li>🎉</li>' },
  { full: '<li>same</li>', brief: '<li>same</li>' },
];

const sectionsArbitrary = fc.array(
  fc.record({
    heading: fc.constantFrom('<h2>CRITICAL (3)</h2>', '<h2>WARNING (12)</h2>', '<h2>Letting lapse (1)</h2>'),
    items: fc.array(fc.constantFrom(...POOL), { maxLength: 12 }),
    after: fc.constantFrom('', '<p class="note">and 4 more</p>'),
  }),
  { minLength: 1, maxLength: 4 },
);

/** The budget at which every item fits whole, and a little more. */
const roomy = (sections: readonly WrittenSection[]) =>
  1_024 +
  sections.reduce(
    (n, s) =>
      n +
      responseBytes(s.heading) +
      responseBytes(s.after) +
      32 +
      s.items.reduce((m, item) => m + responseBytes(item.full), 0),
    0,
  ) +
  50;

describe('the report page lists only what fits, writing only that', () => {
  it('makes the same lists as writing every item first, at any budget', () => {
    fc.assert(
      fc.property(
        sectionsArbitrary.chain((sections) =>
          fc.tuple(fc.constant(sections), fc.integer({ min: 0, max: roomy(sections) })),
        ),
        ([sections, budget]) => {
          expect(listsHtml(lazy(sections).lists, budget)).toBe(listsBefore(sections, budget));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('makes the same lists at every budget byte by byte, duplicates included', () => {
    const sections: WrittenSection[] = [
      {
        heading: '<h2>CRITICAL (4)</h2>',
        items: [POOL[0], POOL[1], POOL[0], POOL[3]] as WrittenItem[],
        after: '',
      },
      {
        heading: '<h2>WARNING (3)</h2>',
        items: [POOL[2], POOL[4], POOL[4]] as WrittenItem[],
        after: '<p>x</p>',
      },
      { heading: '<h2>INFO (0)</h2>', items: [], after: '<p class="note">and 9 more</p>' },
    ];
    const seen = new Set<string>();
    for (let budget = 1_000; budget <= roomy(sections); budget++) {
      const before = listsBefore(sections, budget);
      expect(listsHtml(lazy(sections).lists, budget), `budget ${budget}`).toBe(before);
      seen.add(before);
    }
    // The sweep went from every item left out, through brief ones, to every one whole.
    const pages = [...seen];
    expect(pages.some((page) => page.startsWith('<p class="note">7 more items did not fit'))).toBe(true);
    expect(pages.filter((page) => /The first \d of 7 items/.test(page)).length).toBeGreaterThan(3);
    expect(pages.some((page) => /more items did not fit/.test(page) && /The first 1 of 7/.test(page))).toBe(
      true,
    );
    expect(
      pages.some((page) => !page.includes('class="note">The first') && !page.includes('did not fit')),
    ).toBe(true);
  });

  it('writes only the items it keeps, and the one that did not fit', () => {
    // Briefs of 100 bytes; the first twenty 10 bytes longer whole, the rest 300.
    const brief = `<li>${'y'.repeat(91)}</li>`;
    const items = Array.from({ length: 1_000 }, (_, i) => ({
      brief,
      full: i < 20 ? `${brief}${'z'.repeat(10)}` : `${brief}${'z'.repeat(300)}`,
    }));
    const sections: WrittenSection[] = [{ heading: '<h2>WARNING (1000)</h2>', items, after: '' }];
    const base = 1_024 + responseBytes('<h2>WARNING (1000)</h2>') + 32;
    // Room for 100 brief, then 5 of them whole.
    const budget = base + 100 * 100 + 55;
    const { lists, written } = lazy(sections);
    const html = listsHtml(lists, budget);
    expect(html).toBe(listsBefore(sections, budget));
    expect(html).toContain('The first 5 of 1000 items show registrant and links');
    expect(html).toContain('900 more items did not fit');
    // The 100 kept written brief and the first left out; the 5 made whole and the first that was not.
    expect(written).toEqual({ brief: 101, full: 6 });
  });

  // A page of a million findings: none of them fits whole, and the note said "The first 0 of …".
  it('says none is shown in full when not even the first fits whole', () => {
    const brief = `<li>${'y'.repeat(91)}</li>`;
    const items = Array.from({ length: 1_000 }, () => ({ brief, full: `${brief}${'z'.repeat(300)}` }));
    const sections: WrittenSection[] = [{ heading: '<h2>WARNING (1000)</h2>', items, after: '' }];
    const base = 1_024 + responseBytes('<h2>WARNING (1000)</h2>') + 32;
    const html = listsHtml(lazy(sections).lists, base + 100 * 100 + 55);
    expect(html).toContain('None of the 1000 items show registrant and links; the rest are listed briefly');
    expect(html).not.toContain('The first 0');
  });
});
