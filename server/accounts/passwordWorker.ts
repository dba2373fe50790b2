// The worker thread of passwordChecker.ts: answers { id, password, personal }
// with { id, weakness } from zxcvbn, whose dictionaries live only here.
import { parentPort } from 'node:worker_threads';
import { passwordWeakness } from './passwordPolicy.js';

export interface CheckRequest {
  id: number;
  password: string;
  personal: (string | undefined)[];
}

export interface CheckAnswer {
  id: number;
  weakness: string | null;
}

parentPort!.on('message', ({ id, password, personal }: CheckRequest) => {
  parentPort!.postMessage({ id, weakness: passwordWeakness(password, personal) } satisfies CheckAnswer);
});
