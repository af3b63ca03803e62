#!/usr/bin/env node
// The `sentinel` of package.json's `bin` (npx sentinel, npm link, a global install): runs the
// compiled command line in dist/, which `npm ci` builds (scripts/build-cli.js) and which is built
// again here, first, when a source changed since. Nothing else is printed, so stdout carries only
// the command's output.
import { pathToFileURL } from 'node:url';
import { freshBuild } from '../scripts/build-cli.js';

await import(pathToFileURL(await freshBuild()).href);
