import { buildCli, staleBecause } from '../../scripts/build-cli.js';

/**
 * vitest's global setup: the compiled command line (dist/) as the sources are now, before any test
 * starts the real `sentinel`. Many test files start it at once, so it is built here, once, rather
 * than by whichever of them finds it stale first.
 */
export default async function setup(): Promise<void> {
  if (staleBecause() !== undefined) await buildCli();
}
