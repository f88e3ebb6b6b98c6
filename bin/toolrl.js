#!/usr/bin/env node
// Entry point of the `toolrl` command: registers tsx so the TypeScript sources run as they are.
require('tsx/cjs');
require('../lib/cli/main.ts');
