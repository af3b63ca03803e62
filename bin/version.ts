import pkg from '../package.json' with { type: 'json' };

/**
 * `sentinel --version`, answered before anything else is loaded: the shell (bin/sentinel.ts) asks
 * {@link asksForVersion} first and prints {@link VERSION} without importing a command.
 */

/** The package's version; the compiled command line carries it (esbuild inlines the import). */
export const VERSION: string = pkg.version;

/** What `--version` prints. */
export const VERSION_LINE = `domain-sentinel ${VERSION}`;

/** `sentinel --version`, `-v`, `-V` or `version`: only as the first word, before any command. */
export const asksForVersion = (word: string | undefined): boolean =>
  word === '--version' || word === '-v' || word === '-V' || word === 'version';
