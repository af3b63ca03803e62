// Types of scripts/build-cli.js, which is plain JavaScript because it runs before anything compiles.

/** Where the compiled command line goes. */
export const DIST: string;
/** The compiled entry. */
export const ENTRY: string;
/** Builds dist/ from the sources; the sources it was built from, relative to the root. */
export function buildCli(): Promise<string[]>;
/** Why dist/ must be built again, or undefined when it is up to date. */
export function staleBecause(): string | undefined;
/** dist/ as the sources are now (built again when stale); the entry's path. */
export function freshBuild(): Promise<string>;
