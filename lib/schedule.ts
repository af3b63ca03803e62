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
    return undefined;
  }
  if (/^at\(/.test(expression))
    return `${expression} is a one-time schedule: the scan would run once; use cron() or rate(), ${EXAMPLES}`;
  return `${expression} is not an EventBridge Scheduler expression, ${EXAMPLES}`;
}

/**
 * The most hours a CloudWatch alarm can watch: with periods of an hour or more, periods × evaluation
 * periods may not pass 7 days (604 800 s); CloudFormation learns that only half-way through a deploy.
 */
export const ALARM_MAX_HOURS = 168;

/** The dead-man alarm waits this long past the longest gap: the scan itself takes minutes. */
export const DEAD_MAN_GRACE_HOURS = 1;

/** How far ahead a cron() schedule's runs are followed: a year, so every month and both clock changes. */
const HORIZON_DAYS = 366;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** The longest time a schedule leaves without a run, counted from the deploy, or why it cannot be judged. */
export type ScanGap =
  | { readonly hours: number; readonly after: Date; readonly until: Date }
  | { readonly problem: string };

/** The values one cron field's numbers, ranges (wrapping past the end, as in FRI-MON), steps and * allow. */
function fieldValues(text: string, field: CronField): Set<number> {
  const values = new Set<number>();
  const span = field.max - field.min + 1;
  for (const item of text.split(',')) {
    if (field.special?.test(item)) continue;
    const [range = '', step] = item.split('/');
    const [from = '', to] = range.split('-');
    const first = range === '*' ? field.min : (cronValue(from, field) ?? field.min);
    let last = range === '*' ? field.max : to !== undefined ? (cronValue(to, field) ?? first) : first;
    if (step !== undefined && to === undefined && range !== '*') last = field.max;
    if (last < first) last += span;
    for (let v = first; v <= last; v += Number(step ?? 1)) values.add(field.min + ((v - field.min) % span));
  }
  return values;
}

/** The weekday nearest to `day` in its month (the `W` of day-of-month), which never leaves the month. */
function nearestWeekday(day: number, weekday: (d: number) => number, lastDay: number): number {
  const dow = weekday(day);
  if (dow === 7) return day === 1 ? 3 : day - 1;
  if (dow === 1) return day === lastDay ? day - 2 : day + 1;
  return day;
}

/** Whether a local calendar date is one of the days a valid cron() runs on. */
function dayMatcher(fields: readonly string[]): (y: number, m: number, d: number) => boolean {
  const [, , dayOfMonth = '?', , dayOfWeek = '?'] = fields;
  const values = (i: number) => fieldValues(fields[i] ?? '*', CRON_FIELDS[i] as CronField);
  const [days, months, weekdays, years] = [values(2), values(3), values(4), values(5)];
  const specials = (text: string, field: number) =>
    text.split(',').filter((item) => CRON_FIELDS[field]?.special?.test(item) && item !== '?');
  const daySpecials = specials(dayOfMonth, 2);
  const weekdaySpecials = specials(dayOfWeek, 4);
  return (y, m, d) => {
    if (!years.has(y) || !months.has(m)) return false;
    const lastDay = new Date(Date.UTC(y, m, 0)).getUTCDate();
    const weekday = (day: number) => new Date(Date.UTC(y, m - 1, day)).getUTCDay() + 1;
    if (dayOfWeek === '?')
      return (
        days.has(d) ||
        daySpecials.some((item) => {
          if (item === 'L') return d === lastDay;
          const nearest = item === 'LW' ? lastDay : Number(item.slice(0, -1));
          return nearest <= lastDay && d === nearestWeekday(nearest, weekday, lastDay);
        })
      );
    const dow = weekday(d);
    return (
      weekdays.has(dow) ||
      weekdaySpecials.some((item) => {
        // L alone is the week's last day, Saturday; 6L the month's last Friday; 2#1 its first Monday.
        if (item === 'L') return dow === 7;
        if (item.endsWith('L')) return dow === Number(item[0]) && d + 7 > lastDay;
        return dow === Number(item[0]) && Math.ceil(d / 7) === Number(item[2]);
      })
    );
  };
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `at`, in minutes (Intl names it, e.g. `GMT+2`, `GMT-9:30`, `GMT`). */
function offsetMinutes(timeZone: string, at: number): number {
  let format = offsetFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'shortOffset' });
    offsetFormats.set(timeZone, format);
  }
  const name = format.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const m = /^GMT([+-])(\d{1,2})(?::(\d{2}))?$/.exec(name);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) : 0;
}

/**
 * The instant of local wall-clock time `wall` (as if UTC) near a clock change from offset `before` to
 * `after`: the earlier where the hour repeats, none where it is skipped.
 */
function placeAcrossChange(
  wall: number,
  before: number,
  after: number,
  offsetAt: (t: number) => number,
): number | undefined {
  const early = wall - Math.max(before, after) * 60_000;
  const late = wall - Math.min(before, after) * 60_000;
  if (offsetAt(early) === Math.max(before, after)) return early;
  return offsetAt(late) === Math.min(before, after) ? late : undefined;
}

/**
 * The instants a valid cron() runs at in `timeZone`, from `from` for {@link HORIZON_DAYS} days, in
 * order. Scheduler reads the expression in local time: a run in the hour the clocks skip does not
 * happen, and one in the hour they repeat happens once (AWS's documented behaviour).
 */
function* cronRuns(fields: readonly string[], timeZone: string, from: number): Generator<number> {
  const [minutes = '0', hours = '0'] = fields;
  const times: number[] = [];
  for (const h of [...fieldValues(hours, CRON_FIELDS[1] as CronField)].sort((a, b) => a - b))
    for (const m of [...fieldValues(minutes, CRON_FIELDS[0] as CronField)].sort((a, b) => a - b))
      times.push((h * 60 + m) * 60_000);
  const runsOn = dayMatcher(fields);
  // Clocks change on a quarter hour: one look-up of the zone's rules per quarter hour near a change.
  const quarters = new Map<number, number>();
  const offsetAt = (t: number) => {
    const quarter = Math.floor(t / 900_000);
    const known = quarters.get(quarter);
    if (known !== undefined) return known;
    const offset = offsetMinutes(timeZone, quarter * 900_000);
    quarters.set(quarter, offset);
    return offset;
  };
  const local = new Date(from + offsetMinutes(timeZone, from) * 60_000);
  const firstDay = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - DAY_MS;
  // One offset a day; a day whose neighbours differ holds a clock change, and its runs are placed one by one.
  const offsets = Array.from({ length: HORIZON_DAYS + 5 }, (_, i) =>
    offsetMinutes(timeZone, firstDay + (i - 1) * DAY_MS),
  );
  for (let i = 0; i <= HORIZON_DAYS + 1; i++) {
    const day = new Date(firstDay + i * DAY_MS);
    if (!runsOn(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate())) continue;
    const before = offsets[i] ?? 0;
    const after = offsets[i + 3] ?? 0;
    for (const time of times) {
      const wall = day.getTime() + time;
      const at = before === after ? wall - before * 60_000 : placeAcrossChange(wall, before, after, offsetAt);
      if (at !== undefined && at > from) yield at;
    }
  }
}

/**
 * The longest time a valid schedule leaves without a run, from the deploy (which arms the dead-man
 * switch like a scan) through the next {@link HORIZON_DAYS} days, in whole hours rounded up: for
 * rate() its interval; for cron() followed run by run in `timeZone`, so a clock change, a weekend,
 * a short month or a year field's end all count. A schedule with no run in that time is a problem.
 */
export function longestScanGap(expression: string, timeZone: string, from = new Date()): ScanGap {
  const rate = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (rate) {
    const n = Number(rate[1]);
    const ms = n * (rate[2] === 'minute' ? 60_000 : rate[2] === 'hour' ? HOUR_MS : DAY_MS);
    return { hours: Math.ceil(ms / HOUR_MS), after: from, until: new Date(from.getTime() + ms) };
  }
  const fields = (/^cron\((.*)\)$/.exec(expression)?.[1] ?? '').trim().split(/\s+/);
  const start = from.getTime();
  const end = start + HORIZON_DAYS * DAY_MS;
  let longest = { after: start, until: start };
  let previous = start;
  for (const at of cronRuns(fields, timeZone, start)) {
    if (at > end) break;
    if (at - previous > longest.until - longest.after) longest = { after: previous, until: at };
    previous = at;
  }
  if (previous === start)
    return { problem: `${expression} has no run in the ${HORIZON_DAYS} days from ${from.toISOString()}` };
  if (end - previous > longest.until - longest.after) longest = { after: previous, until: end };
  return {
    hours: Math.ceil((longest.until - longest.after) / HOUR_MS),
    after: new Date(longest.after),
    until: new Date(longest.until),
  };
}

/** The settings that decide the dead-man switch. */
export interface DeadManSettings {
  readonly schedule: string;
  readonly timeZone: string;
  readonly scanIntervalHours?: number | undefined;
  readonly heartbeatUrlParameterName?: string | undefined;
}

/**
 * The dead-man switch of a schedule: the hours it waits for a scan (the longest gap, or
 * scanIntervalHours if that is longer; its grace hour comes on top), none when CloudWatch cannot
 * watch that long and the heartbeat's outside service watches instead, or why the synth refuses.
 */
export function deadManWatch(
  settings: DeadManSettings,
  from = new Date(),
): { readonly intervalHours?: number; readonly problem?: string } {
  const gap = longestScanGap(settings.schedule, settings.timeZone, from);
  if ('problem' in gap)
    return { problem: `schedule ${gap.problem}: the dead-man alarm would fire a day after the deploy` };
  const intervalHours = Math.max(gap.hours, settings.scanIntervalHours ?? 0);
  if (intervalHours + DEAD_MAN_GRACE_HOURS <= ALARM_MAX_HOURS) return { intervalHours };
  if (settings.heartbeatUrlParameterName) return {};
  const day = (d: Date) => d.toISOString().slice(0, 16).replace('T', ' ');
  return {
    problem: `schedule ${settings.schedule} leaves ${gap.hours} hours without a scan (${day(gap.after)} to ${day(gap.until)} UTC, in ${settings.timeZone}); the dead-man alarm waits that and ${DEAD_MAN_GRACE_HOURS} hour more, and a CloudWatch alarm watches at most ${ALARM_MAX_HOURS} hours (7 days): scan at least every ${ALARM_MAX_HOURS - DEAD_MAN_GRACE_HOURS} hours (e.g. cron(0 6 ? * MON,THU *)), or set heartbeatUrlParameterName and let an outside heartbeat service (Healthchecks.io watches weekly checks) tell you when the scan stops`,
  };
}
