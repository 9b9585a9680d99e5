// Runs the certificate benchmark in a worker thread so the full workload (375M hashes, 256 MiB table)
// never blocks the node's event loop. Needs the compiled tree (dist/), where the worker file is .js.
import { Worker } from 'node:worker_threads';
import type { WorkloadParams } from '../../ledger/certificates/codec.js';
import type { WorkloadRunner } from './issuer.js';

export const workerWorkload: WorkloadRunner = (seedHex: string, params: WorkloadParams) =>
  new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./workload-worker.js', import.meta.url), { workerData: { seedHex, params } });
    worker.once('message', (result: { work_proof: string }) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`certificate workload worker exited with code ${code}`));
    });
  });
