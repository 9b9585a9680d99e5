// The node version string `net/<build version>` (README.md "Names"), from package.json — found
// one level up from the sources or two levels up from dist/.

import { readFileSync } from 'node:fs';

function buildVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = readFileSync(new URL(rel, import.meta.url), 'utf8');
      if (!/"name"\s*:\s*"netnode"/.test(pkg)) continue;
      const m = /"version"\s*:\s*"([^"]+)"/.exec(pkg);
      if (m) return m[1]!;
    } catch {
      // not at this level
    }
  }
  return 'dev';
}

export const NODE_VERSION = `net/${buildVersion()}`;
