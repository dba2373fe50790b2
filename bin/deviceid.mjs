#!/usr/bin/env node
// The `deviceid` command. From a checkout it runs the TypeScript source through
// tsx; where only a build exists (npm run build), it runs dist/.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../clients/cli/bin.ts', import.meta.url);
const built = new URL('../dist/clients/cli/bin.js', import.meta.url);

async function tsx() {
  try {
    const { register } = await import('tsx/esm/api');
    register();
    return true;
  } catch {
    return false;
  }
}

if (existsSync(fileURLToPath(source)) && (await tsx())) {
  await import(source.href);
} else if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else {
  process.stderr.write('deviceid: cannot start: install dev dependencies (tsx) or run "npm run build" first\n');
  process.exitCode = 1;
}
