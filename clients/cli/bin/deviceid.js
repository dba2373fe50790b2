#!/usr/bin/env node
// The `deviceid` command of the published @deviceid/cli package.
await import('../dist/esm/bin.js');
