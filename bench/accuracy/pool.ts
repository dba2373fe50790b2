// Runs worlds in worker threads, a few at a time.
import { Worker } from 'node:worker_threads';

export async function inWorkers<T>(
  jobs: Record<string, unknown>[],
  threads: number,
  done?: (job: Record<string, unknown>, r: T) => void,
  worker = new URL('./worker.ts', import.meta.url),
): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, threads) }, async () => {
      for (let i = next++; i < jobs.length; i = next++) {
        out[i] = await new Promise<T>((resolve, reject) => {
          // Workers do not inherit the TypeScript loader: register it, then load the worker module.
          const code = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(worker.href)}); })`;
          const w = new Worker(code, { eval: true, workerData: jobs[i] });
          w.once('message', resolve);
          w.once('error', reject);
        });
        done?.(jobs[i]!, out[i]!);
      }
    }),
  );
  return out;
}
