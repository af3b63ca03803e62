import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEPLOY_DOCS, deployCommands, ROOT } from '../support/deploy-docs';

/**
 * The deploy steps of README.md and docs/deploy.md read in the order they run: the bootstrap and the
 * SSM parameters the stack reads come before the first deploy, and a settings file is shown before
 * the first `npx cdk deploy -c settings=FILE` that needs it (the README once showed the deploy first).
 */

/** The 1-based line of the first line of `file` that `test` accepts, or Infinity. */
function firstLine(file: string, test: (line: string) => boolean): number {
  const at = readFileSync(join(ROOT, file), 'utf8').split('\n').findIndex(test);
  return at < 0 ? Number.POSITIVE_INFINITY : at + 1;
}

const lineOf = (where: string) => Number(where.split(':').at(-1));

describe('the deploy steps, in the order they run', () => {
  for (const file of DEPLOY_DOCS) {
    it(`${file}: bootstrap and secrets first, then each settings file before the deploy that names it`, () => {
      const deploys = deployCommands(file);
      expect(deploys.length, file).toBeGreaterThan(0);
      const firstDeploy = Math.min(...deploys.map((d) => lineOf(d.where)));
      expect(firstLine(file, (l) => l === 'npx cdk bootstrap')).toBeLessThan(firstDeploy);
      for (const name of ['reseller-api-key', 'link-signing-key'])
        expect(
          firstLine(file, (l) => l.startsWith(`aws ssm put-parameter --name /domain-sentinel/${name}`)),
          name,
        ).toBeLessThan(firstDeploy);
      for (const deploy of deploys) {
        const settings = deploy.args.find((a, i) => deploy.args[i - 1] === '-c' && a.startsWith('settings='));
        if (!settings) continue;
        const shown = firstLine(file, (l) => l === `<!-- file: ${settings.slice('settings='.length)} -->`);
        expect(shown, `${deploy.where} names ${settings} before the file is shown`).toBeLessThan(
          lineOf(deploy.where),
        );
      }
    });
  }
});
