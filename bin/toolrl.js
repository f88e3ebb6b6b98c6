#!/usr/bin/env node
// Entry point of the `toolrl` command: registers tsx (as `node --import tsx` would) so the TypeScript
// sources run as they are. Its loader installs both hooks: static imports compile to require()
// (CommonJS), while the lazy `import()` of the report and sweep modules goes through Node's ES-module
// loader.
import('tsx').then(() => require('../lib/cli/main.ts'));
