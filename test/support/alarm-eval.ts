/**
 * A CloudWatch alarm of a synthesized template, run over hours of made-up data, as CloudWatch's
 * documentation says an alarm is evaluated: enough to see when an alarm of this stack fires and
 * clears, not a copy of CloudWatch.
 *
 * - Metric math (docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html):
 *   `FILL(ts, s)` gives every period of the range a value, `s` where there was none; `IF(cond, a, b)`
 *   is `a` where the condition's data point is non-zero (0 where `a` has none), `b` where it is 0,
 *   and dropped where the condition has no data point, or it is 0 and `b` has none or is omitted.
 *   Arithmetic and comparisons are point by point; a period either side lacks has no result.
 * - Evaluation (…/AlarmThatSendsEmail.html#alarms-evaluating-missing-data): CloudWatch reads an
 *   evaluation range longer than the evaluation periods (here N + 2, as the documentation's
 *   example of 3 periods reads 5). With at least N data points it judges the N most recent; with
 *   fewer, it fills the missing ones as TreatMissingData says, as few as it can, and the real ones
 *   count wherever they are in the range; `ignore` with none of them breaching and none within the
 *   threshold keeps the state. ALARM when at least M (DatapointsToAlarm) breach, else OK.
 */

export type Series = Map<number, number>;
type State = 'INSUFFICIENT_DATA' | 'OK' | 'ALARM';

interface MetricQuery {
  readonly Id: string;
  readonly Expression?: string;
  readonly MetricStat?: { Metric: { MetricName: string } };
}

export interface AlarmProperties {
  readonly Metrics?: readonly MetricQuery[];
  readonly MetricName?: string;
  readonly Threshold: number;
  readonly ComparisonOperator: string;
  readonly EvaluationPeriods: number;
  readonly DatapointsToAlarm?: number;
  readonly TreatMissingData?: string;
}

type Value = { series: Series } | { scalar: number };

/** Evaluates one expression over `hours` periods, its metrics' data given by id. */
function evaluate(expression: string, ids: (id: string) => Series, hours: number): Series {
  const tokens = expression.match(
    />=|<=|==|[A-Za-z_][A-Za-z0-9_]{0,99}|\d{1,12}(?:\.\d{1,12})?|[-+*/(),<>]/g,
  );
  if (!tokens) throw new Error(`empty expression ${expression}`);
  let at = 0;
  const next = () => tokens[at++] as string;
  const expect = (t: string) => {
    if (next() !== t) throw new Error(`expected ${t} in ${expression}`);
  };
  const pointwise = (a: Value, b: Value, op: (x: number, y: number) => number): Value => {
    if ('scalar' in a && 'scalar' in b) return { scalar: op(a.scalar, b.scalar) };
    const out: Series = new Map();
    for (let h = 0; h < hours; h++) {
      const x = 'scalar' in a ? a.scalar : a.series.get(h);
      const y = 'scalar' in b ? b.scalar : b.series.get(h);
      if (x !== undefined && y !== undefined) out.set(h, op(x, y));
    }
    return { series: out };
  };
  const at0 = (v: Value, h: number) => ('scalar' in v ? v.scalar : v.series.get(h));
  const primary = (): Value => {
    const t = next();
    if (t === '(') {
      const v = comparison();
      expect(')');
      return v;
    }
    if (/^\d/.test(t)) return { scalar: Number(t) };
    if (t === 'FILL') {
      expect('(');
      const ts = comparison();
      expect(',');
      const fill = comparison();
      expect(')');
      const out: Series = new Map();
      for (let h = 0; h < hours; h++) out.set(h, at0(ts, h) ?? (at0(fill, h) as number));
      return { series: out };
    }
    if (t === 'IF') {
      expect('(');
      const cond = comparison();
      expect(',');
      const yes = comparison();
      let no: Value | undefined;
      if (tokens[at] === ',') {
        next();
        no = comparison();
      }
      expect(')');
      const out: Series = new Map();
      for (let h = 0; h < hours; h++) {
        const c = at0(cond, h);
        if (c === undefined) continue;
        const v = c !== 0 ? (at0(yes, h) ?? 0) : no ? at0(no, h) : undefined;
        if (v !== undefined) out.set(h, v);
      }
      return { series: out };
    }
    return { series: ids(t) };
  };
  const product = (): Value => {
    let v = primary();
    while (tokens[at] === '*' || tokens[at] === '/') {
      const op = next();
      v = pointwise(v, primary(), op === '*' ? (x, y) => x * y : (x, y) => x / y);
    }
    return v;
  };
  const sum = (): Value => {
    let v = product();
    while (tokens[at] === '+' || tokens[at] === '-') {
      const op = next();
      v = pointwise(v, product(), op === '+' ? (x, y) => x + y : (x, y) => x - y);
    }
    return v;
  };
  const comparisons: Record<string, (x: number, y: number) => boolean> = {
    '>': (x, y) => x > y,
    '<': (x, y) => x < y,
    '>=': (x, y) => x >= y,
    '<=': (x, y) => x <= y,
    '==': (x, y) => x === y,
  };
  const comparison = (): Value => {
    const v = sum();
    const op = comparisons[tokens[at] ?? ''];
    if (!op) return v;
    next();
    return pointwise(v, sum(), (x, y) => (op(x, y) ? 1 : 0));
  };
  const result = comparison();
  if (at !== tokens.length) throw new Error(`unread ${tokens.slice(at).join(' ')} in ${expression}`);
  if ('scalar' in result) throw new Error(`${expression} is a scalar`);
  return result.series;
}

/** The alarm's own data point for each period: its returned expression, or its one metric. */
export function alarmSeries(alarm: AlarmProperties, data: Record<string, Series>, hours: number): Series {
  const byId = (id: string): Series => {
    const query = alarm.Metrics?.find((m) => m.Id === id);
    if (!query) throw new Error(`no metric ${id}`);
    if (query.Expression) return evaluate(query.Expression, byId, hours);
    return data[id] ?? new Map();
  };
  if (!alarm.Metrics) return data[alarm.MetricName ?? ''] ?? new Map();
  const returned = alarm.Metrics.filter((m) => (m as { ReturnData?: boolean }).ReturnData !== false);
  if (returned.length !== 1) throw new Error('an alarm returns one time series');
  return byId((returned[0] as MetricQuery).Id);
}

const BREACHES: Record<string, (v: number, t: number) => boolean> = {
  GreaterThanOrEqualToThreshold: (v, t) => v >= t,
  GreaterThanThreshold: (v, t) => v > t,
  LessThanThreshold: (v, t) => v < t,
  LessThanOrEqualToThreshold: (v, t) => v <= t,
};

/** The alarm's state after each hour (the period that ended then), from INSUFFICIENT_DATA. */
export function alarmStates(alarm: AlarmProperties, data: Record<string, Series>, hours: number): State[] {
  const series = alarmSeries(alarm, data, hours);
  const breaches = BREACHES[alarm.ComparisonOperator];
  if (!breaches) throw new Error(`comparison ${alarm.ComparisonOperator}`);
  const n = alarm.EvaluationPeriods;
  const m = alarm.DatapointsToAlarm ?? n;
  const missing = alarm.TreatMissingData ?? 'missing';
  const states: State[] = [];
  let state: State = 'INSUFFICIENT_DATA';
  for (let h = 0; h < hours; h++) {
    const range: number[] = [];
    for (let p = Math.max(0, h - n - 1); p <= h; p++) {
      const v = series.get(p);
      if (v !== undefined) range.push(v);
    }
    const real = range.slice(-n).map((v) => breaches(v, alarm.Threshold));
    const breaching = real.filter(Boolean).length;
    const within = real.length - breaching;
    const filled = n - real.length;
    if (real.length === 0 && missing === 'ignore') {
      // kept
    } else if (real.length === 0 && missing === 'missing') state = 'INSUFFICIENT_DATA';
    else if (filled > 0 && (missing === 'ignore' || missing === 'missing'))
      state = breaching >= m ? 'ALARM' : within > 0 ? 'OK' : state;
    else state = breaching + (missing === 'breaching' ? filled : 0) >= m ? 'ALARM' : 'OK';
    states.push(state);
  }
  return states;
}

/** The hours at which the alarm changed state, and to what. */
export function transitions(states: readonly State[]): Array<[number, State]> {
  return states.flatMap((s, h) => (s !== (h === 0 ? 'INSUFFICIENT_DATA' : states[h - 1]) ? [[h, s]] : []));
}

/** A series of `value` at the given hours. */
export const at = (hours: readonly number[], value = 1): Series => new Map(hours.map((h) => [h, value]));
