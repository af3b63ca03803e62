import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { appErrors, type CdkRun, cdkProject } from '../support/cdk-cli';
import { codeBlocks, DEPLOY_DOCS, deployCommands, documentedFiles, ROOT } from '../support/deploy-docs';

const run = promisify(execFile);
const project = cdkProject();
afterAll(() => project.close());

const BASE_URL = 'resellerBaseUrl=https://api.reseller.example';
type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, string> }
>;
const resourcesOf = (r: CdkRun, stack: string) => project.template(r, stack).Resources as Resources;
const violations = (r: CdkRun) =>
  JSON.parse(readFileSync(join(r.out, 'validation-report.json'), 'utf8')).pluginReports.flatMap(
    (p: { violations?: unknown[] }) => p.violations ?? [],
  );

/** The bundle directory of each of the project's own functions (not CDK's deploy-time function). */
function bundlesOf(r: CdkRun, stack: string): string[] {
  return Object.values(resourcesOf(r, stack))
    .filter(
      (res) =>
        res.Type === 'AWS::Lambda::Function' && /^domain-sentinel:/.test(String(res.Properties.Description)),
    )
    .map((res) => join(r.out, res.Metadata?.['aws:asset:path'] ?? ''));
}

/** A settings file named by a command (`-c settings=FILE`), parsed, as the documents show it. */
function settingsOf(args: readonly string[]): Record<string, unknown> | undefined {
  const name = args.find((a) => a.startsWith('settings='))?.slice('settings='.length);
  if (!name) return undefined;
  const text = DEPLOY_DOCS.map((file) => documentedFiles(file).get(name)).find(Boolean);
  if (!text) throw new Error(`the documents use ${name} but show no such file (<!-- file: ${name} -->)`);
  return JSON.parse(text);
}

// Each test runs the real CDK CLI in a child process: on two busy cores that can take longer than
// the suite's 30 s default, so the test waits as long as the process is allowed to run.
describe('the documented deploy commands, as `cdk synth` with credentials (CDK_DEFAULT_ACCOUNT set)', {
  timeout: 200_000,
}, () => {
  const commands = DEPLOY_DOCS.flatMap((file) => deployCommands(file));
  const runs = new Map<string, Promise<CdkRun>>();
  // One after the other, each started when its test asks: the CLI and esbuild use both cores.
  // The same command in two documents is synthesized once.
  const synthOf = (args: readonly string[]) => {
    const key = JSON.stringify(args);
    if (!runs.has(key)) {
      for (const file of DEPLOY_DOCS)
        for (const [name, text] of documentedFiles(file)) project.write(name, text);
      runs.set(key, project.run('deploy', args));
    }
    return runs.get(key) as Promise<CdkRun>;
  };

  it('finds the deploy commands of the documents, the settings-file deploy among them', () => {
    expect(commands.length).toBeGreaterThanOrEqual(2);
    expect(commands.some((c) => settingsOf(c.args))).toBe(true);
  });

  it.each(commands.map((c) => [c.where, c] as const))(
    '%s synthesizes, cdk-nag on, in a concrete account',
    async (_where, command) => {
      const r = await synthOf(command.args);
      expect(r.stderr.match(/^(ERROR|domain-sentinel:).*$/gm) ?? [], r.stderr).toEqual([]);
      expect(r.code).toBe(0);
      expect(violations(r)).toEqual([]);
      const settings = settingsOf(command.args);
      if (!settings) return;
      // The file's stack name, and exactly the file's subscriptions: a redeploy with it loses none.
      const stackName = String(settings.stackName ?? 'DomainSentinel');
      const subscriptions = Object.values(resourcesOf(r, stackName))
        .filter((res) => res.Type === 'AWS::SNS::Subscription')
        .map((res) => `${res.Properties.Protocol}:${res.Properties.Endpoint}`)
        .sort();
      const list = (key: string) => (settings[key] as string[] | undefined) ?? [];
      expect(subscriptions).toEqual(
        [
          ...list('alertEmails').map((e) => `email:${e}`),
          // The alarms go to the alert recipients when no ops recipient is named.
          ...(list('opsEmails').length ? list('opsEmails') : list('alertEmails')).map((e) => `email:${e}`),
          ...list('alertSmsNumbers').map((n) => `sms:${n}`),
        ].sort(),
      );
    },
  );

  it('bundles both functions with the AWS SDK they were tested with, and each bundle fails cleanly without configuration', async () => {
    const first = commands[0];
    if (!first) throw new Error('no documented deploy command');
    const r = await synthOf(first.args);
    const stackName = String(settingsOf(first.args)?.stackName ?? 'DomainSentinel');
    const bundles = bundlesOf(r, stackName);
    expect(bundles).toHaveLength(2);
    for (const dir of bundles) {
      const code = readFileSync(join(dir, 'index.js'), 'utf8');
      expect(code).toMatch(/exports.handler|handler:/);
      // The AWS SDK is in the bundle, not taken from the runtime (whatever version it ships that day).
      expect(code).not.toMatch(/require\("@aws-sdk\/client-/);
      expect(code).toContain('SSMClient');
      // The SDK's ES modules let esbuild drop what is unused: some 850 KiB with the SDK, not 1 250.
      expect(Buffer.byteLength(code)).toBeLessThan(1_000 * 1024);
    }
    // Invoked without configuration, each fails cleanly before any AWS call (test/deploy runs them
    // with the template's configuration against local AWS services).
    const results = await Promise.all(
      bundles.map(async (dir) => {
        const script = `
          const { handler } = require(${JSON.stringify(join(dir, 'index.js'))});
          const event = { httpMethod: 'GET', resource: '/restore/{domain}', pathParameters: { domain: 'example.nl' }, queryStringParameters: {}, headers: {}, requestContext: {} };
          Promise.resolve(handler(event, { getRemainingTimeInMillis: () => 60000 }))
            .then((r) => console.log('RESULT ' + JSON.stringify({ status: r.statusCode })))
            .catch((e) => console.log('RESULT ' + JSON.stringify({ error: e.message })));`;
        // No NODE_PATH: the bundle needs nothing from outside it.
        const { stdout } = await run(process.execPath, ['-e', script], {
          env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1' },
        });
        // The result's own line: a bundle may log at load.
        return JSON.parse(
          stdout
            .split('\n')
            .find((l) => l.startsWith('RESULT '))
            ?.slice('RESULT '.length) ?? '{}',
        );
      }),
    );
    expect(results).toEqual(
      expect.arrayContaining([{ status: 500 }, { error: 'RESELLER_BASE_URL (--base-url) is required' }]),
    );
  });
});

describe('npx cdk synth refuses bad settings in one line each, before any deploy', {
  timeout: 200_000,
}, () => {
  it.each([
    [
      'no resellerBaseUrl',
      ['-c', 'alertEmails=a@example.nl'],
      'domain-sentinel: invalid context: resellerBaseUrl is required: the reseller API base URL, e.g. -c resellerBaseUrl=https://api.reseller.example',
    ],
    [
      'a schedule EventBridge would reject',
      ['-c', BASE_URL, '-c', 'alertEmails=a@example.nl', '-c', 'schedule=cron(0 6 * * * *)'],
      'domain-sentinel: invalid context: schedule is invalid: cron(0 6 * * * *) must have ? in exactly one of day-of-month and day-of-week (EventBridge cannot combine them), e.g. cron(0 6 * * ? *) or cron(0 6 ? * MON *)',
    ],
    [
      '-c alertEmail (for alertEmails)',
      ['-c', BASE_URL, '-c', 'alertEmail=a@example.nl'],
      'domain-sentinel: invalid context: unknown setting alertEmail; did you mean alertEmails?',
    ],
    [
      'alertEmail in the settings file',
      ['-c', 'settings=typo.settings.json'],
      'domain-sentinel: invalid settings in typo.settings.json: unknown setting alertEmail; did you mean alertEmails?',
    ],
    [
      'no subscriber anywhere',
      ['-c', BASE_URL, '-c', 'opsEmails=ops@example.nl'],
      /^domain-sentinel: No one would receive alerts: the alert topic has no subscriber\. Add alertEmails .* set alertSubscribersOutsideStack to true\.$/,
    ],
  ] as const)('%s', async (_name, args, message) => {
    project.write(
      'typo.settings.json',
      JSON.stringify({ resellerBaseUrl: 'https://api.reseller.example', alertEmail: ['a@example.nl'] }),
    );
    const r = await project.run('synth', args);
    expect(r.code).toBe(1);
    expect(appErrors(r)).toEqual([typeof message === 'string' ? message : expect.stringMatching(message)]);
  });
});

describe('the documented CDK app of your own, with two copies (docs/deploy.md)', { timeout: 160_000 }, () => {
  it('synthesizes through the CLI from the user’s directory, bundling every function from the package', async () => {
    const [example] = codeBlocks('docs/deploy.md', 'ts');
    if (!example) throw new Error('docs/deploy.md shows no CDK app');
    // As saved in a clone: './lib/index' is this repository's.
    project.write(
      'accounts.ts',
      example.replace("'./lib/index'", JSON.stringify(join(ROOT, 'lib', 'index.ts'))),
    );
    const r = await project.run('synth', ['--app', 'node --import tsx accounts.ts']);
    expect(r.stderr.match(/^(ERROR|Error).*$/gm) ?? [], r.stderr).toEqual([]);
    expect(r.code).toBe(0);
    for (const stack of ['AcmeSentinel', 'GlobexSentinel']) {
      const bundles = bundlesOf(r, stack);
      expect(bundles, stack).toHaveLength(2);
      for (const dir of bundles) expect(readFileSync(join(dir, 'index.js'), 'utf8')).toMatch(/handler/);
    }
  });
});
