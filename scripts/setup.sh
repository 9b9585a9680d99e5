#!/usr/bin/env bash
# Installs what netnode needs to run: Node.js 22 (project-local when the machine's is older),
# the npm dependencies (native modules built from source), and the compiled program.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-env.sh
if [ "${NETNODE_NEEDS_NODE22:-0}" = 1 ]; then
  echo "setup: installing Node.js 22 into .tools/node22 (machine has $(node --version 2>/dev/null || echo none))"
  npm install --prefix .tools/node22 --no-save --no-audit --no-fund node@22 >/dev/null
  source scripts/node-env.sh
fi
echo "setup: node $(node --version), npm $(npm --version)"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci (native modules are built from source; this takes a minute)"
  npm ci --no-audit --no-fund
fi
echo "setup: building"
npm run --silent build
echo "setup: done"
