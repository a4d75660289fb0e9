// SQLite's quick_check of a snapshot file on a worker thread, so that checking a large candidate never blocks requests.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** The worker: opens the file read-only, runs quick_check, posts null (ok) or the first problems. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.path, { readonly: true, fileMustExist: true, ...(workerData.nativeBinding ? { nativeBinding: workerData.nativeBinding } : {}) });
  const rows = db.pragma('quick_check(5)', { simple: false }).map((r) => r.quick_check);
  parentPort.postMessage(rows.length === 1 && rows[0] === 'ok' ? null : rows.join('; '));
} catch (e) {
  parentPort.postMessage(String(e && e.message || e));
} finally {
  try { db && db.close(); } catch {}
}
`;

/** Where better-sqlite3 can be loaded from by a worker, or null (a single executable has no module files). */
function modulePath(): string | null {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3');
  } catch {
    return null;
  }
}

/** The same check on this thread, where no worker can load the module. */
function checkHere(path: string, nativeBinding?: string): string | null {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, ...(nativeBinding ? { nativeBinding } : {}) });
    const rows = (db.pragma('quick_check(5)') as { quick_check: string }[]).map((r) => r.quick_check);
    return rows.length === 1 && rows[0] === 'ok' ? null : rows.join('; ');
  } catch (e) {
    return (e as Error).message;
  } finally {
    db?.close();
  }
}

/** null when the file passes quick_check, else what SQLite reported. */
export function quickCheck(path: string, nativeBinding?: string): Promise<string | null> {
  const module = modulePath();
  if (module === null) return Promise.resolve(checkHere(path, nativeBinding));
  return new Promise((resolve) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { module, path, nativeBinding } });
    // The worker ends by itself once it has answered (terminating it inside SQLite could abort the process).
    worker.once('message', (problem: string | null) => resolve(problem));
    worker.once('error', (e) => resolve(`the check could not run: ${e.message}`));
    worker.once('exit', (code) => resolve(`the check could not run (worker exit ${code})`)); // no-op once settled
  });
}
