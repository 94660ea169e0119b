#!/usr/bin/env node
// The `git-scalpel` command line. Shipped bundled into one file (dist/cli.cjs, see
// scripts/bundle-cli.mjs), which dist/git-scalpel.cjs (src/cli/loader.cjs) runs through a V8 code
// cache: an agent's hook starts it for every tool call, and loading some sixty modules one by one,
// then compiling the bundle every time, cost a third of a short command's time.
import { main } from './main.js';

void main();
