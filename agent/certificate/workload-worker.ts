// Worker thread body: runs the certificate benchmark off the event loop (see workerWorkload).
import { parentPort, workerData } from 'node:worker_threads';
import { runCertificateWorkload, type WorkloadParams } from '../../ledger/certificates/codec.js';

const { seedHex, params } = workerData as { seedHex: string; params: WorkloadParams };
parentPort!.postMessage(runCertificateWorkload(seedHex, params));
