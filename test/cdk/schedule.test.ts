import { describe, expect, it } from 'vitest';
import { deadManWatch, longestScanGap, scheduleProblem } from '../../lib/schedule';

describe('scheduleProblem', () => {
  it.each([
    'cron(0 6 * * ? *)',
    'cron(0 6 ? * MON *)',
    'cron(0 6 ? * MON-FRI *)',
    'cron(15,45 */6 * * ? *)',
    'cron(0 6 L * ? *)',
    'cron(0 6 15W JAN-MAR ? 2027)',
    'cron(0 6 ? * 2#1 *)',
    'cron(0 6 ? * 6L *)',
    'cron(0/30 8-18 ? * 2-6 *)',
    'rate(1 minute)',
    'rate(12 hours)',
    'rate(6 days)',
    'rate(160 hours)',
    // Too sparse for the dead-man alarm, but a valid expression: deadManWatch judges the gap.
    'rate(7 days)',
  ])('accepts %s', (expression) => {
    expect(scheduleProblem(expression)).toBeUndefined();
  });

  it.each([
    ['cron(0 6 * * *)', 'cron(0 6 * * *) has 5 fields; EventBridge cron() has 6'],
    ['cron(0 6 * * * *)', 'must have ? in exactly one of day-of-month and day-of-week'],
    ['cron(0 6 ? * ? *)', 'must have ? in exactly one of day-of-month and day-of-week'],
    ['cron(60 6 * * ? *)', 'minutes "60" is not valid (0-59'],
    ['cron(0 24 * * ? *)', 'hours "24" is not valid (0-23'],
    ['cron(0 6 32 * ? *)', 'day-of-month "32" is not valid'],
    ['cron(0 6 * 13 ? *)', 'month "13" is not valid (1-12 or JAN-DEC'],
    ['cron(0 6 ? * MON#6 *)', 'day-of-week "MON#6" is not valid'],
    ['cron(0 6 * * ? 1969)', 'year "1969" is not valid (1970-2199'],
    ['cron(0 */0 * * ? *)', 'hours "*/0" is not valid'],
    ['cron(0 6 ?,1 * ? *)', 'day-of-month "?,1": ? stands alone'],
    ['rate(0 hours)', 'rate(0 hours) must have a value of at least 1'],
    ['rate(1 hours)', 'rate(1 hours) must say rate(1 hour)'],
    ['rate(12 hour)', 'rate(12 hour) must say rate(12 hours)'],
    ['rate(1.5 hours)', 'must be rate(<whole number> <minutes|hours|days>)'],
    ['rate(2 weeks)', 'must be rate(<whole number> <minutes|hours|days>)'],
    ['at(2027-01-01T06:00:00)', 'is a one-time schedule: the scan would run once'],
    ['daily at 6', 'is not an EventBridge Scheduler expression'],
  ])('refuses %s', (expression, reason) => {
    expect(scheduleProblem(expression)).toContain(reason);
  });
});

describe('longestScanGap', () => {
  // A Monday; the year from it holds both of Europe's clock changes (2026-10-25, 2027-03-28).
  const from = new Date('2026-06-01T00:00:00Z');
  const hours = (expression: string, zone = 'UTC') => {
    const gap = longestScanGap(expression, zone, from);
    if ('problem' in gap) throw new Error(gap.problem);
    return gap.hours;
  };

  it.each([
    ['cron(0 6 * * ? *)', 'UTC', 24],
    // Weekdays only: Friday 06:00 to Monday 06:00.
    ['cron(0 6 ? * MON-FRI *)', 'UTC', 72],
    ['cron(0 6 ? * 2-6 *)', 'UTC', 72],
    // Every half hour 08:00-18:30 on weekdays: Friday 18:30 to Monday 08:00 is 61.5 hours.
    ['cron(0/30 8-18 ? * 2-6 *)', 'UTC', 62],
    ['cron(15,45 */6 * * ? *)', 'UTC', 6],
    // A range past midnight wraps, as in Quartz: 02:00 to 22:00 is the day's longest wait.
    ['cron(0 22-2 * * ? *)', 'UTC', 20],
    ['cron(0 6 ? * MON *)', 'UTC', 168],
    ['cron(0 6 ? * FRI-MON *)', 'UTC', 96],
    // July and August have 31 days.
    ['cron(0 6 1 * ? *)', 'UTC', 31 * 24],
    ['cron(0 6 L * ? *)', 'UTC', 31 * 24],
    // The last weekday: 2027-02-26 (Friday; the 28th is a Sunday) to 2027-03-31 is 33 days.
    ['cron(0 6 LW * ? *)', 'UTC', 33 * 24],
    // The first Monday: 2026-06-01 to 2026-07-06 is five weeks.
    ['cron(0 6 ? * 2#1 *)', 'UTC', 35 * 24],
    ['cron(0 6 ? * 6L *)', 'UTC', 35 * 24],
    // 15W on a Saturday runs Friday the 14th: 2026-08-14 (the 15th a Saturday) to 2026-09-15 is 32 days.
    ['cron(0 6 15W * ? *)', 'UTC', 32 * 24],
    // A year field that holds the whole year from the deploy on.
    ['cron(0 6 * * ? 2026-2199)', 'UTC', 24],
    // The night the clocks go back a day lasts 25 hours in local time.
    ['cron(0 6 * * ? *)', 'Europe/Amsterdam', 25],
    ['cron(0 6 * * ? *)', 'America/New_York', 25],
    // Lord Howe Island moves its clocks by half an hour: 24.5 hours, a whole hour more.
    ['cron(0 6 * * ? *)', 'Australia/Lord_Howe', 25],
    ['cron(0 6 * * ? *)', 'Asia/Kolkata', 24],
    // 02:30 does not happen the night the clocks go forward: Scheduler skips that run.
    ['cron(30 2 * * ? *)', 'Europe/Amsterdam', 47],
    // 02:30 happens twice the night they go back: Scheduler runs once, so 24 hours and 25.
    ['cron(30 2 * * ? *)', 'America/New_York', 47],
    ['cron(30 1 * * ? *)', 'America/New_York', 25],
    // rate() counts real time: a clock change does not move its runs.
    ['rate(24 hours)', 'Europe/Amsterdam', 24],
    ['rate(90 minutes)', 'UTC', 2],
    ['rate(5 minutes)', 'UTC', 1],
    ['rate(7 days)', 'UTC', 168],
  ])('finds %s in %s %i hours apart at most', (expression, zone, expected) => {
    expect(hours(expression, zone)).toBe(expected);
  });

  it('says when and where the longest gap is, in UTC', () => {
    expect(longestScanGap('cron(0 6 * * ? *)', 'Europe/Amsterdam', from)).toEqual({
      hours: 25,
      after: new Date('2026-10-24T04:00:00Z'),
      until: new Date('2026-10-25T05:00:00Z'),
    });
  });

  it('counts the time after a year field ends, and the time before it starts, as a gap', () => {
    // Runs in 2026 only: from 2026-12-31 06:00 to the end of the year followed nothing runs.
    expect(hours('cron(0 6 * * ? 2026)')).toBeGreaterThan(3000);
    // Runs from 2027 on: nothing from the deploy (2026-06-01) to 2027-01-01 06:00.
    expect(hours('cron(0 6 * * ? 2027-2199)')).toBe(214 * 24 + 6);
    // A day that never comes is no run either.
    expect(longestScanGap('cron(0 6 30 2 ? *)', 'UTC', from)).toEqual({
      problem: 'cron(0 6 30 2 ? *) has no run in the 366 days from 2026-06-01T00:00:00.000Z',
    });
    expect(longestScanGap('cron(0 6 * * ? 2020)', 'UTC', from)).toEqual({
      problem: 'cron(0 6 * * ? 2020) has no run in the 366 days from 2026-06-01T00:00:00.000Z',
    });
  });

  it('follows an every-minute schedule through a clock change in little time', () => {
    // The clocks going back make one minute-to-minute step an hour and a minute.
    expect(hours('cron(* * * * ? *)', 'Europe/Amsterdam')).toBe(2);
    expect(hours('cron(* * * * ? *)')).toBe(1);
  });
});

describe('deadManWatch', () => {
  const from = new Date('2026-06-01T00:00:00Z');
  const watch = (schedule: string, more: Partial<Parameters<typeof deadManWatch>[0]> = {}) =>
    deadManWatch({ schedule, timeZone: 'UTC', ...more }, from);

  it('waits the longest gap where CloudWatch can watch it (its grace hour comes on top)', () => {
    expect(watch('cron(0 6 * * ? *)')).toEqual({ intervalHours: 24 });
    expect(watch('cron(0 6 ? * MON-FRI *)')).toEqual({ intervalHours: 72 });
    expect(watch('cron(0 6 * * ? *)', { timeZone: 'Europe/Amsterdam' })).toEqual({ intervalHours: 25 });
    expect(watch('rate(167 hours)')).toEqual({ intervalHours: 167 });
    // scanIntervalHours only widens the wait: shorter than the gap, the alarm would fire between runs.
    expect(watch('cron(0 6 * * ? *)', { scanIntervalHours: 100 })).toEqual({ intervalHours: 100 });
    expect(watch('cron(0 6 ? * MON-FRI *)', { scanIntervalHours: 24 })).toEqual({ intervalHours: 72 });
  });

  it('refuses a weekly schedule, naming the setting, the gap and the ways out', () => {
    expect(watch('cron(0 6 ? * MON *)').problem).toBe(
      'schedule cron(0 6 ? * MON *) leaves 168 hours without a scan (2026-06-01 06:00 to 2026-06-08 06:00 UTC, in UTC); the dead-man alarm waits that and 1 hour more, and a CloudWatch alarm watches at most 168 hours (7 days): scan at least every 167 hours (e.g. cron(0 6 ? * MON,THU *)), or set heartbeatUrlParameterName and let an outside heartbeat service (Healthchecks.io watches weekly checks) tell you when the scan stops',
    );
    expect(watch('cron(0 6 1 * ? *)').problem).toMatch(/^schedule cron\(0 6 1 \* \? \*\) leaves 744 hours/);
    expect(watch('rate(7 days)').problem).toMatch(/^schedule rate\(7 days\) leaves 168 hours/);
    expect(watch('cron(0 6 * * ? 2020)').problem).toBe(
      'schedule cron(0 6 * * ? 2020) has no run in the 366 days from 2026-06-01T00:00:00.000Z: the dead-man alarm would fire a day after the deploy',
    );
  });

  it('leaves a schedule CloudWatch cannot watch to the heartbeat, without an alarm', () => {
    expect(watch('cron(0 6 ? * MON *)', { heartbeatUrlParameterName: '/ds/heartbeat' })).toEqual({});
    // A schedule CloudWatch can watch keeps its alarm beside the heartbeat.
    expect(watch('cron(0 6 * * ? *)', { heartbeatUrlParameterName: '/ds/heartbeat' })).toEqual({
      intervalHours: 24,
    });
  });
});
