/**
 * EventBridge Scheduler expressions, checked at synth time. CloudFormation only learns that an
 * expression is wrong halfway through a deploy (and rolls back); these checks make `cdk synth`
 * fail first, with the rule that was broken.
 */

interface CronField {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: readonly string[];
  /** Tokens beyond numbers, ranges, lists and increments that this field accepts. */
  readonly special?: RegExp;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

// The six fields in EventBridge's order; L, W and # are the only extras it documents.
const CRON_FIELDS: readonly CronField[] = [
  { name: 'minutes', min: 0, max: 59 },
  { name: 'hours', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31, special: /^(\?|L|LW|([1-9]|[12]\d|3[01])W)$/ },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day-of-week', min: 1, max: 7, names: WEEKDAYS, special: /^(\?|L|[1-7]L|[1-7]#[1-5])$/ },
  { name: 'year', min: 1970, max: 2199 },
];

const EXAMPLES = 'e.g. cron(0 6 * * ? *) or rate(12 hours)';

/**
 * The longest scan interval the dead-man alarm can watch: it waits the interval plus an hour in
 * one-hour periods, and CloudWatch refuses an alarm whose periods span more than 7 days (168 h)
 * when CloudFormation creates it, half-way through a deploy; a few hours are kept spare.
 */
export const MAX_SCAN_INTERVAL_HOURS = 160;

function cronValue(token: string, field: CronField): number | undefined {
  if (/^\d+$/.test(token)) {
    const n = Number(token);
    return n >= field.min && n <= field.max ? n : undefined;
  }
  const index = field.names?.indexOf(token.toUpperCase()) ?? -1;
  return index >= 0 ? field.min + index : undefined;
}

/** Why one cron field is invalid, or undefined when it is fine. */
function cronFieldProblem(text: string, field: CronField): string | undefined {
  const bad = `${field.name} "${text}" is not valid (${field.min}-${field.max}${field.names ? ` or ${field.names[0]}-${field.names.at(-1)}` : ''}, with , - * /${field.special ? ` and ${field.name === 'day-of-month' ? '? L W' : '? L #'}` : ''})`;
  for (const item of text.split(',')) {
    if (field.special?.test(item)) {
      if (item === '?' && text !== '?') return `${field.name} "${text}": ? stands alone`;
      continue;
    }
    const [range = '', step, ...extra] = item.split('/');
    if (extra.length > 0) return bad;
    if (step !== undefined && !/^[1-9]\d*$/.test(step)) return bad;
    if (range === '*') continue;
    const [from = '', to, ...more] = range.split('-');
    if (more.length > 0 || cronValue(from, field) === undefined) return bad;
    if (to !== undefined && cronValue(to, field) === undefined) return bad;
  }
  return undefined;
}

/**
 * Why `expression` is not a schedule EventBridge Scheduler accepts for a recurring scan, or
 * undefined when it is. Covers the rules that fail deploys in practice: six cron fields with `?`
 * in exactly one of day-of-month and day-of-week, field ranges, and rate() with a positive whole
 * number and a unit whose number agrees with it.
 */
export function scheduleProblem(expression: string): string | undefined {
  const cron = /^cron\((.*)\)$/.exec(expression);
  if (cron) {
    const fields = (cron[1] ?? '').trim().split(/\s+/);
    if (fields.length !== 6)
      return `${expression} has ${fields.length} fields; EventBridge cron() has 6 (minutes hours day-of-month month day-of-week year), ${EXAMPLES}`;
    const [, , dayOfMonth, , dayOfWeek] = fields;
    if ((dayOfMonth === '?') === (dayOfWeek === '?'))
      return `${expression} must have ? in exactly one of day-of-month and day-of-week (EventBridge cannot combine them), e.g. cron(0 6 * * ? *) or cron(0 6 ? * MON *)`;
    for (const [i, field] of CRON_FIELDS.entries()) {
      const problem = cronFieldProblem(fields[i] ?? '', field);
      if (problem) return `${expression}: ${problem}`;
    }
    return undefined;
  }
  const rate = /^rate\((.*)\)$/.exec(expression);
  if (rate) {
    const m = /^(\d+) (minute|hour|day)(s?)$/.exec(rate[1] ?? '');
    if (!m) return `${expression} must be rate(<whole number> <minutes|hours|days>), e.g. rate(12 hours)`;
    const n = Number(m[1]);
    if (n < 1) return `${expression} must have a value of at least 1`;
    const unit = m[2] ?? 'hour';
    if (n === 1 && m[3])
      return `${expression} must say rate(1 ${unit}): EventBridge wants the singular for 1`;
    if (n > 1 && !m[3])
      return `${expression} must say rate(${n} ${unit}s): EventBridge wants the plural above 1`;
    const hours = scheduleIntervalHours(expression);
    if (hours > MAX_SCAN_INTERVAL_HOURS)
      return `${expression} runs every ${hours} hours; the dead-man alarm watches at most ${MAX_SCAN_INTERVAL_HOURS} (CloudWatch evaluates an alarm over 7 days at most): scan more often, e.g. rate(6 days)`;
    return undefined;
  }
  if (/^at\(/.test(expression))
    return `${expression} is a one-time schedule: the scan would run once; use cron() or rate(), ${EXAMPLES}`;
  return `${expression} is not an EventBridge Scheduler expression, ${EXAMPLES}`;
}

/**
 * Hours between two runs of a valid rate() schedule (rounded up, at least 1); 24 for cron(),
 * whose usual use here is once a day (context scanIntervalHours overrides it).
 */
export function scheduleIntervalHours(expression: string): number {
  const m = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (!m) return 24;
  const n = Number(m[1]);
  const hours = m[2] === 'minute' ? n / 60 : m[2] === 'hour' ? n : n * 24;
  return Math.max(1, Math.ceil(hours));
}

/**
 * Whether a valid cron() schedule leaves days out (only some days of the week or month, some
 * months or years): the dead-man alarm's default window of a day would fire between its runs.
 */
export function skipsDays(expression: string): boolean {
  const cron = /^cron\((.*)\)$/.exec(expression);
  if (!cron) return false;
  const [, , dayOfMonth, month, dayOfWeek, year] = (cron[1] ?? '').trim().split(/\s+/);
  return ![dayOfMonth, month, dayOfWeek, year].every((field) => field === '*' || field === '?');
}

/** The zone's offset from UTC at `at`, in minutes (Intl names it, e.g. `GMT+2`, `GMT-9:30`, `GMT`). */
function offsetMinutes(timeZone: string, at: Date): number {
  const name =
    new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'shortOffset' })
      .formatToParts(at)
      .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT([+-])(\d{1,2})(?::(\d{2}))?$/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) : 0;
}

/**
 * Hours (rounded up) by which a clock change of `timeZone` can stretch the gap between two runs of
 * a cron() schedule, which Scheduler reads in local time: 06:00 the day the clocks go back is 25
 * hours after 06:00 the day before. 0 for rate(), which counts real time, and for a zone without
 * daylight saving time. Measured over the year from `from`, so a zone's rules come from the
 * runtime's own time zone data, not a table kept here.
 */
export function clockChangeHours(expression: string, timeZone: string, from = new Date()): number {
  if (!expression.startsWith('cron(')) return 0;
  const offsets = Array.from({ length: 53 }, (_, week) =>
    offsetMinutes(timeZone, new Date(from.getTime() + week * 7 * 86_400_000)),
  );
  return Math.ceil((Math.max(...offsets) - Math.min(...offsets)) / 60);
}
