import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './deploy-docs';

/** The account and region of a user whose credentials the CDK CLI found. */
export const DEPLOY_ENV = { account: '123456789012', region: 'eu-west-1' } as const;

export interface CdkRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The cloud assembly directory (`-o`). */
  readonly out: string;
}

/**
 * A user's checkout as the CDK CLI sees it: a scratch directory with the project's cdk.json (its
 * app pointing at this repository's bin/app.ts) and node_modules, so files a document tells the
 * user to write (a settings file) land beside cdk.json without touching the repository.
 */
export function cdkProject() {
  const dir = mkdtempSync(join(tmpdir(), 'sentinel-cdk-project-'));
  const cdkJson = JSON.parse(readFileSync(join(ROOT, 'cdk.json'), 'utf8'));
  cdkJson.app = cdkJson.app.replace('bin/app.ts', join(ROOT, 'bin', 'app.ts'));
  writeFileSync(join(dir, 'cdk.json'), JSON.stringify(cdkJson, null, 2));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  symlinkSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
  let runs = 0;
  return {
    dir,
    write(name: string, text: string) {
      writeFileSync(join(dir, name), text);
    },
    /**
     * `npx cdk <command> -o <fresh dir> <args>` with the environment the CLI gives an app when
     * credentials exist (`CDK_DEFAULT_ACCOUNT`, and the region from `AWS_REGION`), or none.
     */
    run(
      command: 'synth' | 'deploy',
      args: readonly string[],
      options: { readonly account?: boolean } = {},
    ): Promise<CdkRun> {
      const out = join(dir, `out-${++runs}`);
      mkdirSync(out);
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: dir,
        CI: 'true',
        CDK_DISABLE_CLI_TELEMETRY: 'true',
        // No instance metadata service to wait for on a machine without AWS.
        AWS_EC2_METADATA_DISABLED: 'true',
        ...(options.account === false
          ? {}
          : {
              CDK_DEFAULT_ACCOUNT: DEPLOY_ENV.account,
              CDK_DEFAULT_REGION: DEPLOY_ENV.region,
              AWS_REGION: DEPLOY_ENV.region,
            }),
      };
      // `deploy` never runs here: the tests synthesize what the documented deploy would.
      const argv = [
        'cdk',
        command === 'deploy' ? 'synth' : command,
        '--quiet',
        '--no-notices',
        '-o',
        out,
        ...args,
      ];
      return new Promise((resolve) => {
        execFile('npx', argv, { cwd: dir, env, timeout: 150_000 }, (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr, out });
        });
      });
    },
    template(run: CdkRun, stackName: string) {
      return JSON.parse(readFileSync(join(run.out, `${stackName}.template.json`), 'utf8'));
    },
    close() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The `domain-sentinel:` lines of a failed synth: what the app said, without the CLI's noise. */
export const appErrors = (run: CdkRun) =>
  run.stderr.split('\n').filter((line) => line.startsWith('domain-sentinel:'));
