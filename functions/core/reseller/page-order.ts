// The order paging reads the pages after page 1 in, and when a read the time budget will cut turns
// it.

/**
 * From the time page 1 and the first round of pages after it (`concurrency` pages) have arrived, at
 * each page that arrives, the pace of the pages read so far projects the rest of the read. Only when
 * the rest does not fit in the time left (with a quarter to spare) does the read turn, once: it goes
 * on from a page chosen by `run` among the pages not asked for yet (golden-ratio steps: successive
 * runs start far apart, and a few of them start everywhere) to the last page, then reads the pages
 * it skipped. A read that fits keeps the order 1…N.
 */
export interface Rotation {
  /** Which run this is, as a whole number: the scan gives the hour it evaluates. */
  readonly run: number;
  /**
   * The minute of that hour (0 to 59): a run Lambda retries a minute or three later, in the same
   * hour, turns at another page (steps of {@link MINUTE_STEP}), not at the one it cut at. Runs at a
   * fixed minute of the hour keep their golden-ratio steps. @default 0
   */
  readonly minute?: number;
  /** The clock the pace is measured with (ms). */
  readonly clock: () => number;
  /** Time left before the deadline (ms). */
  readonly remainingMs: () => number;
}

/** The golden ratio's fraction: steps by it never land near an earlier step for long. */
const GOLDEN = 0.618033988749895;

/**
 * A minute's step: 1/ρ, ρ the plastic number. Not the golden ratio's square, 1 − GOLDEN: with it the
 * next hour one minute later (GOLDEN + 1 − GOLDEN = 1) turned at this run's page, so a schedule whose
 * start drifts across a minute read the same pages twice. With 1/ρ, an hour and up to three minutes
 * either way stay at least a tenth of the pages from this run's start.
 */
const MINUTE_STEP = 0.7548776662466927;

/** Of a rest projected to take this long, this much more must be left for a read to keep its order. */
const FIT_MARGIN = 1.25;

/**
 * The order pages after page 1 are asked in: 2…N, or once {@link PageOrder.turn}ed, on from a later
 * page to the last, then the pages skipped. Pages a moved listing adds (onMove) are read whenever
 * they appear, after the page before them.
 */
export class PageOrder {
  private ahead = 2;
  private behind = 2;
  private behindEnd = 1;

  constructor(readonly pages: () => number) {}

  /** The next page to ask for; undefined when every page was asked for. */
  next(): number | undefined {
    if (this.ahead <= this.pages()) return this.ahead++;
    if (this.behind <= this.behindEnd) return this.behind++;
    return undefined;
  }

  /**
   * Goes on from a page not asked for yet, `at` (0 to 1) of the way through them, to the last page,
   * then reads the pages it skipped. Among the pages left, not all pages: a read that turns late
   * still spreads its cut over them.
   */
  turn(at: number): void {
    const start = this.ahead + Math.floor(at * (this.pages() - this.ahead + 1));
    // A start that is no page (from a run that is no number) keeps the order: NaN would end the read.
    if (!Number.isInteger(start) || start <= this.ahead || start > this.pages()) return;
    this.behind = this.ahead;
    this.behindEnd = start - 1;
    this.ahead = start;
  }
}

/**
 * What each page that arrives after page 1 tells the {@link Rotation}: from the first round on, at
 * each arrival, the order turns (once) when the rest of the read, at the pace of the pages read so
 * far, does not fit. Judged again at every arrival, not at the first round alone: an API that slows
 * down later in the read would otherwise cut the same tail of the account every run. The pace is the
 * whole read's, not the last few pages': one slow answer does not turn a read that fits, and a
 * read that will not fit still turns before its time runs out (what is left goes to nothing, the
 * pages left do not).
 */
export function rotateWhenLate(
  rotation: Rotation | undefined,
  concurrency: number | undefined,
  order: PageOrder,
): () => void {
  if (!rotation) return () => {};
  const began = rotation.clock();
  const round = Math.max(1, concurrency ?? 4);
  let arrived = 0;
  let decided = false;
  return () => {
    arrived++;
    if (decided || arrived < Math.min(round, order.pages() - 1)) return;
    const elapsedMs = rotation.clock() - began;
    const left = order.pages() - 1 - arrived;
    // A clock that went back gives no pace: keep the order (and judge again at the next page).
    if (left <= 0 || elapsedMs < 0) return;
    if (rotation.remainingMs() >= (FIT_MARGIN * elapsedMs * left) / arrived) return;
    decided = true;
    order.turn((((rotation.run * GOLDEN + (rotation.minute ?? 0) * MINUTE_STEP) % 1) + 1) % 1);
  };
}
