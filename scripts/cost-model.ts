/**
 * What domain-sentinel costs on AWS: one set of assumptions (region, price date, list prices,
 * sizes) and the arithmetic from it to every cost figure of the documents. `npm run docs` writes
 * the assumptions table and the figures into docs/costs.md, and the one-line summaries into
 * deploy.md, memory.md, accounts.md and chat.md (scripts/docs.ts); test/docs/generated.test.ts
 * fails when a file differs from what this gives, test/unit/cost-model.test.ts when a dollar figure
 * stands outside a generated region. Change a price or a size here, run `npm run docs`, and every
 * figure follows.
 */

/** Where and when the prices hold. */
export const REGION = 'eu-west-1 (Ireland)';
export const PRICE_DATE = 'January 2025 (after DynamoDB’s on-demand price cut of November 2024)';

/** List prices of {@link REGION} in USD, without free tiers (a deployment shares them with the rest of its account). */
export const PRICES = {
  lambdaGbSecond: 0.0000133334,
  lambdaMillionRequests: 0.2,
  dynamoMillionReads: 0.1414,
  dynamoMillionWrites: 0.7069,
  dynamoStorageGbMonth: 0.283,
  dynamoBackupGbMonth: 0.2264,
  s3StorageGbMonth: 0.023,
  s3ThousandPuts: 0.005,
  kmsKeyMonth: 1,
  alarmMetricMonth: 0.1,
  customMetricMonth: 0.3,
  dashboardMonth: 3,
  logsIngestGb: 0.57,
  logsStoreGbMonth: 0.03,
  snsMillionPublishes: 0.5,
  snsHundredThousandEmails: 2,
  sqsMillionRequests: 0.4,
  stepFunctionsThousandTransitions: 0.025,
} as const;

/** The sizes and counts the arithmetic needs; where each comes from is in {@link assumptionRows}. */
export const SIZES = {
  scanMemoryMb: 3008,
  scanSeconds1k: 2,
  scanSeconds100k: 20,
  flaggedShare: 0.145,
  warningShare: 0.024,
  changedShareADay: 0.01,
  memoryBytes: 270,
  memoryBytesWithFinding: 400,
  domainsPerItem: 8,
  reportBytesPerDomain: 91,
  viewBytesPerDomain: 79,
  reportKeptDays: 30,
  s3PutsPerScan: 3,
  loggedFindings: 200,
  logBytesPerFinding: 650,
  alarmMetrics: 11,
  scanMetrics: 7,
  webMetrics: 8,
  webMetricHours: 10,
  accountAlarmMetrics: 3,
  accountMetrics: 8,
  accountTransitions: 4,
  webhookPollers: 5,
  webhookPollSeconds: 20,
} as const;

const HOURS_A_MONTH = 730;
const DAYS_A_MONTH = 30;

const n = (x: number) => Math.round(x).toLocaleString('en-US').replaceAll(',', ' ');
const pct = (x: number) => `${(x * 100).toFixed(1).replace(/\.0$/, '')} %`;
const mb = (bytes: number) =>
  bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;

/** SQS requests a webhook queue gets a month from Lambda's long polls, messages or not. */
const webhookPollsAMonth = () => SIZES.webhookPollers * ((HOURS_A_MONTH * 3600) / SIZES.webhookPollSeconds);

/** A list price: whole dollars as they are, cents with two places at least ($0.10, $0.0000133334). */
const listed = (x: number) =>
  `$${Number.isInteger(x) ? x : x.toFixed(Math.max(2, String(x).split('.')[1]?.length ?? 0))}`;

/** The assumptions table: what, the value, where it comes from. */
export function assumptionRows(): Array<readonly [string, string, string]> {
  const p = Object.fromEntries(Object.entries(PRICES).map(([k, x]) => [k, listed(x)])) as Record<
    keyof typeof PRICES,
    string
  >;
  const s = SIZES;
  return [
    ['region', REGION, 'where the stack is deployed'],
    ['prices', `list prices of ${PRICE_DATE}`, 'the AWS pricing pages; no free tier counted but SQS’s'],
    [
      'Lambda',
      `${p.lambdaGbSecond} per GB-second (ARM), ${p.lambdaMillionRequests} per million requests`,
      'list price',
    ],
    [
      'DynamoDB on demand',
      `${p.dynamoMillionReads} per million read units, ${p.dynamoMillionWrites} per million write units, ${p.dynamoStorageGbMonth} per GB-month, ${p.dynamoBackupGbMonth} per GB-month of point-in-time recovery`,
      'list price',
    ],
    ['S3 Standard', `${p.s3StorageGbMonth} per GB-month, ${p.s3ThousandPuts} per 1 000 PUTs`, 'list price'],
    ['KMS', `${p.kmsKeyMonth} per key a month`, 'list price'],
    [
      'CloudWatch',
      `${p.alarmMetricMonth} per alarm metric, ${p.customMetricMonth} per custom metric a month (billed by the hours it gets data), ${p.dashboardMonth} per dashboard (an account’s first 3 are free), logs ${p.logsIngestGb} per GB ingested and ${p.logsStoreGbMonth} per GB-month`,
      'list price',
    ],
    [
      'SNS, SQS, Step Functions',
      `${p.snsMillionPublishes} per million publishes, ${p.snsHundredThousandEmails} per 100 000 e-mails beyond a month’s first 1 000; ${p.sqsMillionRequests} per million SQS requests beyond an account’s free million; ${p.stepFunctionsThousandTransitions} per 1 000 state transitions`,
      'list price; SMS by country',
    ],
    [
      'the scan',
      `${n(s.scanMemoryMb)} MB, ~${s.scanSeconds1k} s for 1 000 domains, ~${s.scanSeconds100k} s for 100 000 with memory`,
      'lib/scanner.ts; npm run bench at 50 ms a request (performance.md)',
    ],
    [
      'findings',
      `${pct(s.flaggedShare)} of domains have one, ${pct(s.warningShare)} at warning or above; ${pct(s.changedShareADay)} of domains change a day`,
      'the simulator’s realistic portfolio; the change rate is an assumption',
    ],
    [
      'memory',
      `~${s.memoryBytes} bytes per domain, ~${s.memoryBytesWithFinding} with a finding; ${s.domainsPerItem} domains per item; read strongly consistent (4 KB a read unit, 1 KB a write unit)`,
      'functions/aws/dynamodb-state-store.ts, memory.md',
    ],
    [
      'reports',
      `~${s.reportBytesPerDomain} bytes of report and ~${s.viewBytesPerDomain} of its view per domain of the account; ${s.s3PutsPerScan} PUTs a scan; ${s.reportKeptDays} days of history`,
      'measured: a 10 000-domain report with links; lib/report-bucket.ts',
    ],
    [
      'logs',
      `each scan logs its report with at most ${s.loggedFindings} findings, ~${s.logBytesPerFinding} bytes each; kept a month`,
      'functions/handlers/scheduled-scan.ts',
    ],
    [
      'alarms and metrics',
      `${s.alarmMetrics} alarm metrics (one more with SMS); ${s.scanMetrics} scan metrics each hour a scan runs; ${s.webMetrics} web outcomes for ~${s.webMetricHours} hours of clicks a month`,
      'deploy.md, What you get; functions/aws/metrics.ts',
    ],
    [
      'each account of several',
      `a failure alarm and a dead-man switch (${s.accountAlarmMetrics} alarm metrics), ${s.accountMetrics} metrics, ${s.accountTransitions} state transitions a scan`,
      'accounts.md, On AWS',
    ],
    [
      'each webhook',
      `Lambda keeps ~${s.webhookPollers} long polls of ${s.webhookPollSeconds} s open on its queue: ~${n(webhookPollsAMonth())} SQS requests a month`,
      'Lambda’s SQS event source',
    ],
  ];
}

/** How large the account is and how often it is scanned. */
export interface Scenario {
  readonly domains: number;
  readonly scansPerDay: number;
  readonly scanSeconds: number;
}

export const SMALL: Scenario = { domains: 1_000, scansPerDay: 1, scanSeconds: SIZES.scanSeconds1k };
export const LARGE: Scenario = { domains: 100_000, scansPerDay: 24, scanSeconds: SIZES.scanSeconds100k };

const scansAMonth = (s: Pick<Scenario, 'scansPerDay'>) => s.scansPerDay * DAYS_A_MONTH;

/** Bytes of memory per domain, averaged over domains with and without a finding. */
const memoryBytesPerDomain = () =>
  SIZES.memoryBytes * (1 - SIZES.flaggedShare) + SIZES.memoryBytesWithFinding * SIZES.flaggedShare;

/** Distinct items of `items` that `changes` changes, spread evenly, touch. */
const itemsTouched = (items: number, changes: number) => items * (1 - (1 - 1 / items) ** changes);

/** DynamoDB's reads and writes a month for an account of `domains` scanned `scansPerDay` times a day. */
export function memoryUse(s: Pick<Scenario, 'domains' | 'scansPerDay'>) {
  const stored = s.domains * memoryBytesPerDomain();
  const items = Math.ceil(s.domains / SIZES.domainsPerItem);
  const unitsPerItem = Math.ceil((SIZES.domainsPerItem * memoryBytesPerDomain()) / 1024);
  const readsPerScan = Math.ceil(stored / 4096);
  // Each scan writes the items whose domains changed since the last one, and three small ones; once a day, with the
  // message that goes out, also those of every finding at warning or above (their `alerted` time).
  const changesPerScan = (s.domains * SIZES.changedShareADay) / s.scansPerDay;
  const writesPerScan = itemsTouched(items, changesPerScan) * unitsPerItem + 3;
  const alertedPerDay = itemsTouched(items, s.domains * SIZES.warningShare) * unitsPerItem;
  const scans = scansAMonth(s);
  return {
    stored,
    readsPerScan,
    readsAMonth: readsPerScan * scans,
    writesAMonth: writesPerScan * scans + alertedPerDay * DAYS_A_MONTH,
    firstScanWrites: items * unitsPerItem,
  };
}

/** DynamoDB's cost a month for that use: reads, writes, storage and point-in-time recovery. */
export function memoryCost(use: ReturnType<typeof memoryUse>): number {
  return (
    (use.readsAMonth * PRICES.dynamoMillionReads + use.writesAMonth * PRICES.dynamoMillionWrites) / 1e6 +
    (use.stored / 1e9) * (PRICES.dynamoStorageGbMonth + PRICES.dynamoBackupGbMonth)
  );
}

/** The first scan's writes: every item once. */
export const firstScanCost = (use: ReturnType<typeof memoryUse>) =>
  (use.firstScanWrites * PRICES.dynamoMillionWrites) / 1e6;

/** Reports the bucket holds: those of the days kept (each day's scans once), the latest, and its view. */
export function reportBytes(s: Pick<Scenario, 'domains' | 'scansPerDay'>): number {
  const reports = s.scansPerDay * SIZES.reportKeptDays + 1;
  return s.domains * (reports * SIZES.reportBytesPerDomain + SIZES.viewBytesPerDomain);
}

/** One line of a cost table: what, how it adds up, and its cost a month (low and high end). */
export interface CostLine {
  readonly what: string;
  readonly how: string;
  readonly usd: readonly [number, number];
}

const fixed = (x: number): readonly [number, number] => [x, x];

/** Every line of one deployment's bill a month. */
export function deploymentCost(s: Scenario, sms = false): CostLine[] {
  const scans = scansAMonth(s);
  const gbSeconds = (scans * s.scanSeconds * SIZES.scanMemoryMb) / 1024;
  const use = memoryUse(s);
  const stored = reportBytes(s);
  const logged = Math.min(s.domains * SIZES.flaggedShare, SIZES.loggedFindings);
  const logBytes = scans * logged * SIZES.logBytesPerFinding;
  const scanHours = Math.min(scans, HOURS_A_MONTH);
  const alarms = SIZES.alarmMetrics + (sms ? 1 : 0);
  const metricHours = SIZES.scanMetrics * scanHours + SIZES.webMetrics * SIZES.webMetricHours;
  return [
    {
      what: 'Lambda (the scan)',
      how: `${n(scans)} scans × ${s.scanSeconds} s × ${(SIZES.scanMemoryMb / 1024).toFixed(2)} GB = ${n(gbSeconds)} GB-s`,
      usd: fixed(gbSeconds * PRICES.lambdaGbSecond + (scans * PRICES.lambdaMillionRequests) / 1e6),
    },
    {
      what: 'DynamoDB (memory)',
      how: `${n(use.readsPerScan)} reads a scan (${mb(use.stored)} kept), ${n(use.writesAMonth / scans)} writes a scan: ${n(use.readsAMonth)} reads + ${n(use.writesAMonth)} writes`,
      usd: fixed(memoryCost(use)),
    },
    {
      what: 'S3 (reports)',
      how: `${SIZES.s3PutsPerScan} PUTs a scan; ${n(s.scansPerDay * SIZES.reportKeptDays)} reports of ${mb(s.domains * SIZES.reportBytesPerDomain)} kept: ${mb(stored)}`,
      usd: fixed(
        (stored / 1e9) * PRICES.s3StorageGbMonth +
          (scans * SIZES.s3PutsPerScan * PRICES.s3ThousandPuts) / 1000,
      ),
    },
    { what: 'KMS (the topics’ key)', how: 'one key', usd: fixed(PRICES.kmsKeyMonth) },
    {
      what: 'CloudWatch alarms',
      how: `${alarms} alarm metrics${sms ? ' (with SMS)' : ''}`,
      usd: fixed(alarms * PRICES.alarmMetricMonth),
    },
    {
      what: 'CloudWatch custom metrics',
      how: `${SIZES.scanMetrics} scan metrics for ${n(scanHours)} hours, ${SIZES.webMetrics} web outcomes for ${SIZES.webMetricHours}`,
      usd: fixed((metricHours / HOURS_A_MONTH) * PRICES.customMetricMonth),
    },
    {
      what: 'CloudWatch dashboard',
      how: 'one; free among an account’s first 3',
      usd: [0, PRICES.dashboardMonth],
    },
    {
      what: 'CloudWatch Logs',
      how: `${mb(logBytes)} a month, kept a month`,
      usd: fixed((logBytes / 1e9) * (PRICES.logsIngestGb + PRICES.logsStoreGbMonth)),
    },
    {
      what: 'SNS, API Gateway, Scheduler, SSM',
      how: `${n(scans)} publishes; a few clicks; e-mail and SMS as sent`,
      usd: fixed((scans * PRICES.snsMillionPublishes) / 1e6),
    },
  ];
}

/** What each account of several adds to a deployment a month, besides its size (its scans, memory, reports). */
export function accountCost(s: Pick<Scenario, 'scansPerDay'>): CostLine[] {
  const scans = scansAMonth(s);
  const hours = Math.min(scans, HOURS_A_MONTH);
  return [
    {
      what: 'CloudWatch alarms',
      how: `its failure alarm and dead-man switch: ${SIZES.accountAlarmMetrics} alarm metrics`,
      usd: fixed(SIZES.accountAlarmMetrics * PRICES.alarmMetricMonth),
    },
    {
      what: 'CloudWatch custom metrics',
      how: `${SIZES.accountMetrics} metrics carry its name, for the ${n(hours)} hours its scans run`,
      usd: fixed(((SIZES.accountMetrics * hours) / HOURS_A_MONTH) * PRICES.customMetricMonth),
    },
    {
      what: 'Step Functions',
      how: `${SIZES.accountTransitions} state transitions a scan`,
      usd: fixed((scans * SIZES.accountTransitions * PRICES.stepFunctionsThousandTransitions) / 1000),
    },
    {
      what: 'SNS, SSM',
      how: 'one publish a scan; a standard SecureString',
      usd: fixed((scans * PRICES.snsMillionPublishes) / 1e6),
    },
  ];
}

/** What a chat channel (one more publish a scan) and a webhook (its queue's polls) add a month. */
export function chatCost(s: Pick<Scenario, 'scansPerDay'>): {
  readonly chat: number;
  readonly webhook: number;
} {
  const scans = scansAMonth(s);
  return {
    chat: (scans * PRICES.snsMillionPublishes) / 1e6,
    webhook:
      (webhookPollsAMonth() * PRICES.sqsMillionRequests) / 1e6 + (scans * PRICES.lambdaMillionRequests) / 1e6,
  };
}

/** The sum of cost lines, low and high end. */
export const total = (lines: readonly CostLine[]): readonly [number, number] => [
  lines.reduce((t, l) => t + l.usd[0], 0),
  lines.reduce((t, l) => t + l.usd[1], 0),
];

/** A dollar figure as the documents write it. */
export function usd(x: number): string {
  if (x === 0) return '$0';
  if (x < 0.01) return '< $0.01';
  return x < 100 ? `$${x.toFixed(2)}` : `$${x.toFixed(0)}`;
}

/** A range of dollars (`$2.25–5.25`), or one figure when both ends read the same. */
export function usdRange([low, high]: readonly [number, number]): string {
  return usd(low) === usd(high) ? usd(low) : `${usd(low)}–${usd(high).slice(1)}`;
}

/** Every domain count the memory table shows, scanned daily. */
export const MEMORY_SIZES = [1_000, 10_000, 100_000, 1_000_000] as const;

/** Numbers as the tables write them. */
export const format = { n, mb };

const cell = (text: string) => text.replaceAll('|', '\\|');
const table = (head: readonly string[], rows: ReadonlyArray<readonly string[]>) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');

/** The cost regions of the documents, by name (scripts/docs.ts writes them). */
export function costRegions(): Record<string, () => string> {
  const small = deploymentCost(SMALL);
  const large = deploymentCost(LARGE);
  const perAccount = [accountCost(SMALL), accountCost(LARGE)] as const;
  const chat = [chatCost(SMALL), chatCost(LARGE)] as const;
  const memory = MEMORY_SIZES.map((domains) => ({ domains, use: memoryUse({ domains, scansPerDay: 1 }) }));
  const million = memory.at(-1) as (typeof memory)[number];
  const hundredThousand = memory.find((m) => m.domains === 100_000) as (typeof memory)[number];
  return {
    'cost-assumptions': () => table(['assumption', 'value', 'from'], assumptionRows()),
    'cost-deployment': () =>
      table(
        ['what', '1 000 domains, scanned daily', '100 000 domains, scanned hourly'],
        [
          ...small.map((line, i) => {
            const big = large[i] as CostLine;
            return [line.what, `${line.how}: ${usdRange(line.usd)}`, `${big.how}: ${usdRange(big.usd)}`];
          }),
          ['**total a month**', `**${usdRange(total(small))}**`, `**${usdRange(total(large))}**`],
        ],
      ),
    'cost-memory': () =>
      table(
        ['domains', 'reads a month', 'writes a month', 'kept', 'a month', 'first scan'],
        memory.map(({ domains, use }) => [
          n(domains),
          n(use.readsAMonth),
          n(use.writesAMonth),
          mb(use.stored),
          usd(memoryCost(use)),
          usd(firstScanCost(use)),
        ]),
      ),
    'cost-accounts': () =>
      table(
        ['what', 'scanned daily', 'scanned hourly'],
        [
          ...perAccount[0].map((line, i) => {
            const hourly = perAccount[1][i] as CostLine;
            return [
              line.what,
              `${line.how}: ${usdRange(line.usd)}`,
              `${hourly.how}: ${usdRange(hourly.usd)}`,
            ];
          }),
          [
            '**total a month**',
            `**${usdRange(total(perAccount[0]))}**`,
            `**${usdRange(total(perAccount[1]))}**`,
          ],
        ],
      ),
    'cost-chat': () =>
      table(
        ['what', 'scanned daily', 'scanned hourly'],
        [
          ['a chat channel (Slack or Teams): one more publish a scan', usd(chat[0].chat), usd(chat[1].chat)],
          [
            'a webhook: its queue’s polls, one Lambda run per alert',
            usd(chat[0].webhook),
            usd(chat[1].webhook),
          ],
        ],
      ),
    'cost-deploy-summary': () =>
      `about ${usdRange(total(small))} a month for 1 000 domains scanned daily, and ${usdRange(total(large))} for 100 000 domains scanned hourly`,
    'cost-memory-summary': () =>
      `${usd(memoryCost(hundredThousand.use))} a month for 100 000 domains scanned daily, ${usd(memoryCost(million.use))} for a million`,
    'cost-account-summary': () =>
      `${usdRange(total(perAccount[0]))} a month scanned daily, ${usdRange(total(perAccount[1]))} scanned hourly`,
    'cost-chat-summary': () =>
      `a chat channel ${usd(chat[0].chat)} a month, a webhook about ${usd(chat[0].webhook)} (its queue's polls, beyond SQS's free million requests)`,
  };
}
