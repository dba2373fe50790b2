// The checkout's root, whether the server runs from source (server/, through
// tsx or vitest) or compiled (dist/server/, what `npm start` runs). Files that
// are read at run time (page scripts bundled on first request, the stylesheet,
// the agent's source, the launcher) are found from here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const parent = fileURLToPath(new URL('..', import.meta.url));
export const REPO_ROOT = existsSync(join(parent, 'package.json')) ? parent : fileURLToPath(new URL('../..', import.meta.url));

/** A file of the checkout by its path from the root (`server/pages/login/browser.ts`). */
export const repoFile = (path: string): URL => pathToFileURL(join(REPO_ROOT, path));
