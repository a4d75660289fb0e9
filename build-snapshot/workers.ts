// Compiler workers: the listings parser, the full-text writer and the integrity checks, each on a thread of its own.
import { getAsset, isSea } from 'node:sea';
import { Worker } from 'node:worker_threads';
import type { CheckJob, CheckResult } from './checks.ts';
import type { FullTextJob } from './fts-worker.ts';
import type { ListingsJob } from './listings-worker.ts';

/** `integrity_check` of one table of the file on a worker thread (see runChecks): its problems. */
export function checkInWorker(file: string, table: string): Promise<string[]> {
  const worker = startWorker({ kind: 'check', file, table });
  const result = new Promise<string[]>((resolve, reject) => {
    worker.once('message', (r: CheckResult) => {
      if ('error' in r) reject(new Error(r.error));
      else resolve(r.problems);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`check worker exited with code ${code}`))); // no-op once settled
  });
  // Collected by runChecks; a build that fails before that ignores the answer (and must not leave it unhandled).
  result.catch(() => {});
  return result;
}

/** The compiler workers' script inside the single executable: listings-worker.ts bundled as one CommonJS file. */
export const WORKER_ASSET = 'compiler-worker.js';

/** Starts a compiler worker (listings-worker.ts: the listings parser, the full-text worker, or a check). */
export function startWorker(workerData: { kind: 'listings'; job: ListingsJob } | FullTextJob | CheckJob): Worker {
  // The full-text worker holds a few batches of bodies at a time: a small young generation keeps its heap
  // (and the build's peak memory) small.
  const resourceLimits = workerData.kind === 'fts' ? { maxYoungGenerationSizeMb: 4 } : undefined;
  // The single executable has no script files (nor import.meta): the worker runs the script it carries.
  if (isSea()) return new Worker(getAsset(WORKER_ASSET, 'utf8'), { eval: true, workerData, resourceLimits });
  // Under tsx (TypeScript sources) the worker needs the same loader; a bundled build runs plain JS.
  const ts = import.meta.url.endsWith('.ts');
  const entry = new URL(ts ? './listings-worker.ts' : './listings-worker.js', import.meta.url).href;
  return ts
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`,
        { eval: true, workerData, resourceLimits },
      )
    : new Worker(new URL(entry), { workerData, resourceLimits });
}
