import { describe, expect, it } from 'vitest';
import { clockChangeHours, scheduleIntervalHours, scheduleProblem, skipsDays } from '../../lib/schedule';

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
    // The dead-man alarm watches the interval plus an hour, and CloudWatch evaluates 7 days at most.
    ['rate(7 days)', 'rate(7 days) runs every 168 hours; the dead-man alarm watches at most 160'],
    ['rate(161 hours)', 'rate(161 hours) runs every 161 hours'],
    ['rate(9700 minutes)', 'rate(9700 minutes) runs every 162 hours'],
    ['at(2027-01-01T06:00:00)', 'is a one-time schedule: the scan would run once'],
    ['daily at 6', 'is not an EventBridge Scheduler expression'],
  ])('refuses %s', (expression, reason) => {
    expect(scheduleProblem(expression)).toContain(reason);
  });
});

describe('scheduleIntervalHours', () => {
  it('gives the hours between rate() runs, rounded up, at least 1, and a day for cron()', () => {
    expect(scheduleIntervalHours('rate(6 hours)')).toBe(6);
    expect(scheduleIntervalHours('rate(90 minutes)')).toBe(2);
    expect(scheduleIntervalHours('rate(5 minutes)')).toBe(1);
    expect(scheduleIntervalHours('rate(2 days)')).toBe(48);
    expect(scheduleIntervalHours('cron(0 6 * * ? *)')).toBe(24);
  });
});

describe('skipsDays', () => {
  it('tells a cron() that leaves days out from one of every day, and never a rate()', () => {
    for (const expression of [
      'cron(0 6 ? * MON-FRI *)',
      'cron(0 6 L * ? *)',
      'cron(0 6 * JAN ? *)',
      'cron(0 6 * * ? 2027)',
    ])
      expect(skipsDays(expression), expression).toBe(true);
    for (const expression of ['cron(0 6 * * ? *)', 'cron(0/30 8-18 ? * * *)', 'rate(2 days)', 'rate(1 hour)'])
      expect(skipsDays(expression), expression).toBe(false);
  });
});

describe('clockChangeHours', () => {
  const from = new Date('2026-06-01T00:00:00Z');
  it.each([
    ['cron(0 6 * * ? *)', 'Europe/Amsterdam', 1],
    ['cron(0 6 * * ? *)', 'America/New_York', 1],
    // Lord Howe Island moves its clocks by half an hour: a whole hour of the alarm covers it.
    ['cron(0 6 * * ? *)', 'Australia/Lord_Howe', 1],
    ['cron(0 6 * * ? *)', 'UTC', 0],
    ['cron(0 6 * * ? *)', 'Asia/Kolkata', 0],
    // rate() counts real time: a clock change does not move its runs.
    ['rate(24 hours)', 'Europe/Amsterdam', 0],
  ])('gives %s in %s %i hour(s) more between two runs', (expression, zone, hours) => {
    expect(clockChangeHours(expression, zone, from)).toBe(hours);
  });
});
