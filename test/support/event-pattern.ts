/**
 * What EventBridge does with a rule's pattern and a target's input transformer, for the parts the
 * stack's rules use: a pattern of exact values and `prefix` matchers (an array field such as
 * `resources` matches when any element does), and an input template of `<name>` placeholders filled
 * from JSON paths of the event. A reading of EventBridge's documented behaviour, not EventBridge.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function matchesValue(matcher: Json, value: Json | undefined): boolean {
  if (value === undefined) return false;
  if (Array.isArray(value)) return value.some((v) => matchesValue(matcher, v));
  if (matcher !== null && typeof matcher === 'object' && !Array.isArray(matcher)) {
    const keys = Object.keys(matcher);
    if (keys.length === 1 && keys[0] === 'prefix')
      return typeof value === 'string' && value.startsWith(String(matcher.prefix));
    throw new Error(`the rehearsal does not know the matcher ${JSON.stringify(matcher)}`);
  }
  return matcher === value;
}

/** Whether `event` matches `pattern`: every field of the pattern present, each matching one of its values. */
export function matchesPattern(pattern: Record<string, Json>, event: Record<string, Json>): boolean {
  return Object.entries(pattern).every(([key, wanted]) => {
    const value = event[key];
    if (Array.isArray(wanted)) return wanted.some((m) => matchesValue(m, value));
    if (wanted === null || typeof wanted !== 'object')
      throw new Error(`${key}: a pattern's leaf is an array`);
    return (
      value !== null &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      matchesPattern(wanted as Record<string, Json>, value as Record<string, Json>)
    );
  });
}

/** The value at a JSON path of the form `$.a.b`, as EventBridge's InputPathsMap reads it. */
function at(event: Json, path: string): Json | undefined {
  if (!/^\$(\.[\w-]{1,100}){0,20}$/.test(path))
    throw new Error(`the rehearsal does not read the path ${path}`);
  let value: Json | undefined = event;
  for (const part of path.split('.').slice(1))
    value = value !== null && typeof value === 'object' && !Array.isArray(value) ? value[part] : undefined;
  return value;
}

/**
 * The target's input for `event`: each `<name>` of the template replaced by the value at its path.
 * Inside a JSON string (the template of a text input) a value goes in as string content, escaped.
 */
export function transformInput(
  transformer: { InputPathsMap: Record<string, string>; InputTemplate: string },
  event: Record<string, Json>,
): Json {
  const filled = transformer.InputTemplate.replace(/<([\w-]{1,100})>/g, (placeholder, name: string) => {
    const path = transformer.InputPathsMap[name];
    if (path === undefined) return placeholder;
    const value = at(event, path);
    return JSON.stringify(typeof value === 'string' ? value : JSON.stringify(value ?? null)).slice(1, -1);
  });
  return JSON.parse(filled) as Json;
}

/** A 'CloudWatch Alarm State Change' event, shaped as CloudWatch's guide shows one (single metric alarm). */
export function alarmStateChange(
  place: { account: string; region: string },
  alarmName: string,
  from: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA',
  to: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA',
): Record<string, Json> {
  return {
    version: '0',
    id: 'c4c1c1c9-6542-e61b-6ef0-8c4d36933a92',
    'detail-type': 'CloudWatch Alarm State Change',
    source: 'aws.cloudwatch',
    account: place.account,
    time: '2026-03-02T06:14:40Z',
    region: place.region,
    resources: [`arn:aws:cloudwatch:${place.region}:${place.account}:alarm:${alarmName}`],
    detail: {
      alarmName,
      configuration: { description: 'the alarm' },
      previousState: { reason: 'before', timestamp: '2026-03-01T06:14:40.000+0000', value: from },
      state: { reason: 'now', timestamp: '2026-03-02T06:14:40.000+0000', value: to },
    },
  };
}
