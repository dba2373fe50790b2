// The worker thread of passwordChecker.ts: says 'ready' once zxcvbn's
// dictionaries (which live only here) are loaded, then answers each
// { password, personal } with { weakness }, one at a time.
import { parentPort } from 'node:worker_threads';
import { passwordWeakness } from './passwordPolicy.js';

export interface CheckRequest {
  password: string;
  personal: (string | undefined)[];
}

export type CheckAnswer = 'ready' | { weakness: string | null };

parentPort!.on('message', ({ password, personal }: CheckRequest) => {
  parentPort!.postMessage({ weakness: passwordWeakness(password, personal) } satisfies CheckAnswer);
});
parentPort!.postMessage('ready' satisfies CheckAnswer);
