import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { cdkProject } from '../support/cdk-cli';
import { DEPLOY_DOCS, deployCommands, documentedFiles } from '../support/deploy-docs';

const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), 'sentinel-cdk-out-'));
const env = { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', CI: 'true' };
afterAll(() => rmSync(out, { recursive: true, force: true }));

// Each test runs the real CDK CLI in a child process: on two busy cores that can take longer than
// the suite's 30 s default, so the test waits as long as the process is allowed to run.
describe('npx cdk synth (real esbuild bundling, cdk-nag applied by bin/app.ts)', { timeout: 120_000 }, () => {
  it('synthesises the stack and bundles both functions', async () => {
    await run(
      'npx',
      [
        'cdk',
        'synth',
        '--quiet',
        '--no-notices',
        '-o',
        out,
        '-c',
        'resellerBaseUrl=https://api.reseller.example',
      ],
      {
        env,
        timeout: 120_000,
      },
    );
    const template = JSON.parse(readFileSync(join(out, 'DomainSentinel.template.json'), 'utf8'));
    const functions = Object.values(template.Resources as Record<string, { Type: string }>).filter(
      (r) => r.Type === 'AWS::Lambda::Function',
    );
    expect(functions.length).toBeGreaterThanOrEqual(2);
    const bundles = readdirSync(out).filter(
      (d) => d.startsWith('asset.') && statSync(join(out, d)).isDirectory(),
    );
    const withHandler = bundles.filter((d) => readdirSync(join(out, d)).includes('index.js'));
    expect(withHandler).toHaveLength(2);
    for (const dir of withHandler) {
      const code = readFileSync(join(out, dir, 'index.js'), 'utf8');
      expect(code).toMatch(/exports.handler|handler:/);
      // The AWS SDK is left to the Node.js 24 runtime: required, not bundled.
      expect(code).toContain('require("@aws-sdk/client-ssm")');
      // zod as a namespace import lets esbuild drop what is unused: about 230 KiB, not 580 (biome.json).
      expect(Buffer.byteLength(code)).toBeLessThan(300 * 1024);
    }
    const report = JSON.parse(readFileSync(join(out, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports.flatMap((r: { violations?: unknown[] }) => r.violations ?? [])).toEqual([]);

    // The bundles load and run as the Lambda runtime runs them: plain Node, CommonJS, the AWS SDK
    // from outside the bundle. Invoked without configuration, each must fail cleanly before any AWS call.
    const results = await Promise.all(
      withHandler.map(async (dir) => {
        const script = `
          const { handler } = require(${JSON.stringify(join(out, dir, 'index.js'))});
          const event = { httpMethod: 'GET', resource: '/restore/{domain}', pathParameters: { domain: 'example.nl' }, queryStringParameters: {}, headers: {}, requestContext: {} };
          Promise.resolve(handler(event, { getRemainingTimeInMillis: () => 60000 }))
            .then((r) => console.log('RESULT ' + JSON.stringify({ status: r.statusCode })))
            .catch((e) => console.log('RESULT ' + JSON.stringify({ error: e.message })));`;
        const { stdout } = await run(process.execPath, ['-e', script], {
          env: {
            PATH: process.env.PATH,
            NODE_PATH: join(process.cwd(), 'node_modules'),
            AWS_REGION: 'eu-west-1',
          },
        });
        return JSON.parse(stdout.split('RESULT ')[1] ?? '{}');
      }),
    );
    expect(results).toEqual(
      expect.arrayContaining([{ status: 500 }, { error: 'RESELLER_BASE_URL (--base-url) is required' }]),
    );
  });

  it('fails with one line naming resellerBaseUrl when it is not given', async () => {
    const failure = await run(
      'npx',
      ['cdk', 'synth', '--quiet', '--no-notices', '-o', join(out, 'missing')],
      { env, timeout: 120_000 },
    ).catch((e) => e);
    expect(failure.code).toBe(1);
    const lines = String(failure.stderr)
      .split('\n')
      .filter((l) => l.startsWith('domain-sentinel:'));
    expect(lines).toEqual([
      'domain-sentinel: invalid context: resellerBaseUrl is required: the reseller API base URL, e.g. -c resellerBaseUrl=https://api.reseller.example',
    ]);
  });

  it('fails with one line naming schedule when EventBridge would reject it, before any deploy', async () => {
    const failure = await run(
      'npx',
      [
        'cdk',
        'synth',
        '--quiet',
        '--no-notices',
        '-o',
        join(out, 'bad-schedule'),
        '-c',
        'resellerBaseUrl=https://api.reseller.example',
        '-c',
        'schedule=cron(0 6 * * * *)',
      ],
      { env, timeout: 120_000 },
    ).catch((e) => e);
    expect(failure.code).toBe(1);
    const lines = String(failure.stderr)
      .split('\n')
      .filter((l) => l.startsWith('domain-sentinel:'));
    expect(lines).toEqual([
      'domain-sentinel: invalid context: schedule is invalid: cron(0 6 * * * *) must have ? in exactly one of day-of-month and day-of-week (EventBridge cannot combine them), e.g. cron(0 6 * * ? *) or cron(0 6 ? * MON *)',
    ]);
  });
});

describe('the documented deploy commands, as `cdk synth` with credentials (CDK_DEFAULT_ACCOUNT set)', {
  timeout: 160_000,
}, () => {
  const project = cdkProject();
  afterAll(() => project.close());
  const commands = DEPLOY_DOCS.flatMap((file) => deployCommands(file));

  it('finds the deploy commands of the documents', () => {
    expect(commands.length).toBeGreaterThanOrEqual(1);
  });

  it.each(commands.map((c) => [c.where, c] as const))(
    '%s synthesizes, cdk-nag on, in a concrete account',
    async (_where, command) => {
      for (const file of DEPLOY_DOCS)
        for (const [name, text] of documentedFiles(file)) project.write(name, text);
      const run = await project.run('deploy', command.args);
      expect(run.stderr.match(/^(ERROR|domain-sentinel:).*$/gm) ?? [], run.stderr).toEqual([]);
      expect(run.code).toBe(0);
      const report = JSON.parse(readFileSync(join(run.out, 'validation-report.json'), 'utf8'));
      expect(report.pluginReports.flatMap((r: { violations?: unknown[] }) => r.violations ?? [])).toEqual([]);
    },
  );
});
