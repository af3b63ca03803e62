import { ENV, SECRET_SETTINGS, SETTINGS, type SettingName, type SettingSpec } from '../functions/core/config';

/**
 * The command line's commands and options, defined once: the parser (bin/cli.ts), `sentinel help`
 * and the README's tables (scripts/readme.ts, checked by test/docs/readme-generated.test.ts) all read
 * this table, so a flag cannot exist in one and not the others.
 */

export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  /** Placeholder of the value in help, e.g. `N`, `ISO`. */
  readonly value?: string;
  readonly doc: string;
  /** The setting this flag overrides: its variable and default come from there. */
  readonly setting?: SettingName;
  /** Shown in help when the option has no setting. */
  readonly default?: string;
}

export interface CommandSpec {
  readonly name: string;
  /** Positional arguments, e.g. `<domain>`. */
  readonly args?: string;
  readonly summary: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
}

/** An option bound to a setting: the doc and default are the setting's own. */
const fromSetting = (name: SettingName, value: string): OptionSpec => {
  const spec: SettingSpec = SETTINGS[name];
  return { type: 'string', value, doc: spec.doc, setting: name };
};

const PORT = (fallback: string): OptionSpec => ({
  type: 'string',
  value: 'N',
  doc: 'TCP port on 127.0.0.1; 0 picks a free one',
  default: fallback,
});

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'scan',
    summary: 'one scan of the account: report, digest, alert',
    options: {
      json: { type: 'boolean', doc: 'print only the JSON report on stdout' },
      'dry-run': {
        type: 'boolean',
        doc: `print the digest and SMS instead of publishing (publishing needs ${ENV.alertTopicArn})`,
      },
      now: {
        type: 'string',
        value: 'ISO',
        doc: 'evaluate the rules at this instant (reproducible runs)',
        default: 'now',
      },
      'expiry-days': fromSetting('expiryDays', 'N'),
      'critical-days': fromSetting('criticalDays', 'N'),
      mode: fromSetting('scanMode', 'MODE'),
      'per-page': fromSetting('perPage', 'N'),
      concurrency: fromSetting('concurrency', 'N'),
      'timeout-ms': fromSetting('requestTimeoutMs', 'MS'),
      'time-budget': fromSetting('timeBudgetSeconds', 'S'),
      'max-response-mb': fromSetting('maxResponseMb', 'N'),
      'min-severity': fromSetting('minSeverity', 'LEVEL'),
      'time-zone': fromSetting('timeZone', 'TZ'),
      'base-url': fromSetting('resellerBaseUrl', 'URL'),
      state: fromSetting('state', 'PATH|dynamodb:TABLE'),
      'allow-clock-skew': {
        type: 'boolean',
        doc: "with --state: scan even when --now is more than 5 minutes ahead of this machine's clock or before the state's last scan (a replay, or a clock that was wrong); stored times in the future then count as due",
      },
      'fail-on': {
        type: 'string',
        value: 'LEVEL',
        doc: 'exit 3 when a finding is at info, warning or critical or above',
        default: 'off',
      },
    },
  },
  {
    name: 'state',
    args: '<init|reset|rebind> <PATH|dynamodb:TABLE>',
    summary:
      'init: create the state table with the stack’s own definition (AWS_ENDPOINT_URL_DYNAMODB for a local one); reset: forget this account’s state; rebind: after a key rotation, bind the state to RESELLER_API_KEY, keeping its memory',
    options: { yes: { type: 'boolean', doc: 'confirm reset or rebind' } },
  },
  {
    name: 'simulate',
    summary: 'the embedded reseller simulator (prints the base URL and a key to export)',
    options: {
      port: PORT('8080'),
      domains: { type: 'string', value: 'N', doc: 'domains in the portfolio', default: '500' },
      portfolio: {
        type: 'string',
        value: 'PROFILE',
        doc: 'realistic (about 14 % of domains flagged) or stress (about 42 %, and dates no search can select)',
        default: 'realistic',
      },
      seed: {
        type: 'string',
        value: 'S',
        doc: 'portfolio seed: the same seed, the same portfolio',
        default: '1',
      },
      now: {
        type: 'string',
        value: 'ISO',
        doc: 'lay the portfolio out around this instant (pin it, with scan --now, for the same findings every day)',
        default: 'now',
      },
      latency: {
        type: 'string',
        value: 'MS',
        doc: 'every answer leaves this long after its request arrived',
        default: '0',
      },
      'max-per-page': { type: 'string', value: 'N', doc: 'the server caps per_page here', default: '100' },
      faults: {
        type: 'string',
        value: 'LIST',
        doc: 'faults for the next domain-list requests after page 1, in order: 429 (Retry-After: 1), 500, 503, hang, malformed (a cut JSON body)',
        default: 'none',
      },
      'rate-limit': {
        type: 'string',
        value: 'RPS',
        doc: 'answer 429 with Retry-After beyond this many requests a second (a token bucket)',
        default: 'none',
      },
      'search-semantics': {
        type: 'string',
        value: 'HOW',
        doc: 'how repeated search parameters combine: or, and, or ignore (search parameters are ignored)',
        default: 'or',
      },
    },
  },
  {
    name: 'demo',
    summary: 'the simulator and a real dry-run scan against it (what npm start runs)',
    options: {
      domains: { type: 'string', value: 'N', doc: 'domains in the portfolio', default: '60' },
      seed: { type: 'string', value: 'S', doc: 'portfolio seed', default: '7' },
      now: {
        type: 'string',
        value: 'ISO',
        doc: 'lay the portfolio out and scan at this instant (the same output every day)',
        default: 'now',
      },
    },
  },
  {
    name: 'try-alerts',
    summary:
      'the alert path end to end without AWS: an SNS/SQS emulator (fauxqs) on 127.0.0.1 with a topic and two queues (one unfiltered, one with the SMS filter severity = critical), the simulator, one real scan publishing through the AWS SDK, and what each queue received',
    options: {
      domains: { type: 'string', value: 'N', doc: 'domains in the portfolio', default: '60' },
      seed: { type: 'string', value: 'S', doc: 'portfolio seed', default: '7' },
      now: {
        type: 'string',
        value: 'ISO',
        doc: 'lay the portfolio out and scan at this instant',
        default: 'now',
      },
    },
  },
  {
    name: 'serve',
    summary:
      'every link (restore, snooze, acknowledge, report page, calendar feed) on a local HTTP server, through the web Lambda’s own handler',
    options: { port: PORT('8787') },
  },
  {
    name: 'link',
    args: '<domain>',
    summary: `print a signed restore link (to ${ENV.linkBaseUrl}, or serve's default address)`,
    options: { 'ttl-days': fromSetting('linkTtlDays', 'N') },
  },
  {
    name: 'restore',
    args: '<domain>',
    summary:
      'restore a domain from quarantine now, through the reseller API (a paid action): asks for the name typed, and for .nl the registrant’s consent',
    options: {
      yes: { type: 'boolean', doc: 'do not ask to type the name' },
      consent: {
        type: 'boolean',
        doc: 'the registrant agreed to the restore (needed with --yes for .nl: SIDN restores only with the registrant’s consent)',
      },
      state: {
        ...fromSetting('state', 'PATH|dynamodb:TABLE'),
        doc: 'keep the attempt in this state store’s audit trail (as the restore link does)',
      },
    },
  },
  {
    name: 'audit',
    summary: 'the audit trail of restores kept in the state store: every attempt, newest first',
    options: {
      json: { type: 'boolean', doc: 'print the entries as JSON' },
      state: {
        ...fromSetting('state', 'PATH|dynamodb:TABLE'),
        doc: 'the state store (file or table) the scans and the restore links use',
      },
    },
  },
  {
    name: 'snooze',
    args: '<domain>',
    summary: 'leave a domain out of alerts for N days (in the report still; back at once if it gets worse)',
    options: {
      days: { type: 'string', value: 'N', doc: 'days to snooze, 1 to 365', default: '7' },
      state: fromSetting('state', 'PATH|dynamodb:TABLE'),
    },
  },
  {
    name: 'ack',
    args: '<domain>',
    summary: 'acknowledge a domain: out of alerts until its expiry date, status or auto-renew changes',
    options: { state: fromSetting('state', 'PATH|dynamodb:TABLE') },
  },
  {
    name: 'help',
    summary: 'this text',
    options: {},
  },
];

/** The spec of one command. */
export function commandSpec(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** `parseArgs` options of a command. */
export function parseOptionsOf(spec: CommandSpec) {
  return Object.fromEntries(
    Object.entries(spec.options).map(([flag, o]) => [flag, { type: o.type }]),
  ) as Record<string, { type: 'string' | 'boolean' }>;
}

/** What an option's default is, in words. */
export function defaultOf(option: OptionSpec): string | undefined {
  if (option.setting) {
    const d = (SETTINGS[option.setting] as SettingSpec).default;
    return d === undefined ? undefined : String(d);
  }
  return option.default;
}

/** `sentinel help`: every command, option, variable and default, from the tables above. */
export function renderHelp(): string {
  const lines = ['usage: sentinel <command> [options]', '', 'commands:'];
  for (const command of COMMANDS) {
    lines.push(`  ${command.name}${command.args ? ` ${command.args}` : ''}`);
    lines.push(`      ${command.summary}`);
    for (const [flag, option] of Object.entries(command.options)) {
      const value = option.value ? ` ${option.value}` : '';
      const d = defaultOf(option);
      const env = option.setting ? `; ${SETTINGS[option.setting].env}` : '';
      lines.push(
        `      --${flag}${value}  ${option.doc}${d !== undefined ? ` (default ${d}${env})` : env ? ` (${env.slice(2)})` : ''}`,
      );
    }
  }
  lines.push('', 'environment (flags override):');
  for (const spec of Object.values(SETTINGS) as SettingSpec[]) {
    lines.push(`  ${spec.env}  ${spec.doc}${spec.default !== undefined ? ` (default ${spec.default})` : ''}`);
  }
  for (const spec of SECRET_SETTINGS) lines.push(`  ${spec.env}  ${spec.doc}`);
  lines.push(
    '  and the AWS SDK’s own (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL_SNS, …)',
    '',
    'exit status: 0 completed, 1 could not complete (one line on stderr says why), 2 bad usage or configuration, 3 --fail-on level reached',
  );
  return lines.join('\n');
}
