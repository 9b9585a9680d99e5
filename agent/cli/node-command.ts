// `netnode node [flags]`: run the daemon until SIGTERM/SIGINT, then stop gracefully.

import { ConfigError, loadConfig } from '../config.js';
import { startNode } from '../node.js';

export async function runNodeCommand(argv: string[]): Promise<number> {
  let config;
  try {
    config = loadConfig(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`netnode node: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const node = await startNode(config);
  await new Promise<void>((resolve) => {
    let received = false;
    const onSignal = (signal: NodeJS.Signals): void => {
      node.logger.info({ signal }, received ? 'signal received, already stopping' : 'signal received');
      received = true;
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  await node.stop();
  return 0;
}
