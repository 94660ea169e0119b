#!/usr/bin/env node
// The `git-scalpel` binary. Shipped bundled into one file (dist/git-scalpel.mjs, see
// scripts/bundle-cli.mjs): an agent's hook starts it for every tool call, and loading some sixty
// modules one by one cost a third of a short command's time.
import { main } from './main.js';

void main();
