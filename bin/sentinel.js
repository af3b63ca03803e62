#!/usr/bin/env node
// The `sentinel` of package.json's `bin` (npx sentinel, npm link, a global install): the command line
// is TypeScript, run without a build step through tsx's loader, registered for this process only.
// Nothing is printed here, so stdout carries only the command's output.
import { register } from 'tsx/esm/api';

register();
await import('./sentinel.ts');
