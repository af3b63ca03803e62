/** How a read cut short names the pages it did not read (paging's cut page). */

/** The pages 1…`pages` not in `taken`, as ranges (`4 to 9, 20`), the first few; '' when none. */
export function unreadPages(taken: ReadonlySet<number>, pages: number): string {
  const ranges: string[] = [];
  let count = 0;
  for (let page = 1; page <= pages; page++) {
    if (taken.has(page)) continue;
    let last = page;
    while (last < pages && !taken.has(last + 1)) last++;
    count++;
    if (ranges.length < 3) ranges.push(page === last ? `${page}` : `${page} to ${last}`);
    page = last;
  }
  if (count === 0) return '';
  const more = count > ranges.length ? `, and ${count - ranges.length} more ranges` : '';
  const word = count === 1 && !ranges[0]?.includes(' to ') ? 'page' : 'pages';
  return `${word} ${ranges.join(', ')}${more}`;
}
