#!/usr/bin/env node
// The `deviceid` command from a checkout: runs the TypeScript source through
// tsx (which applies tsconfig.json's paths, so @deviceid/* are the sources).
// The published command is clients/cli/bin/deviceid.js.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../clients/cli/bin.ts', import.meta.url);
const built = new URL('../clients/cli/dist/esm/bin.js', import.meta.url);

async function tsx() {
  try {
    const { register } = await import('tsx/esm/api');
    register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
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
