#!/usr/bin/env bash
# The project's test command (`npm test`): builds, makes sure the system services and VM
# base images the integration tests use exist, then runs every test with vitest.
# Ends with a plain "tests: N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node-env.sh
npm run --silent build
bash scripts/system-deps.sh
node dist/agent/cli/main.js image build --backend docker
node dist/agent/cli/main.js image build --backend libvirt
mkdir -p .tmp
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-report.json "$@" || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(".tmp/vitest-report.json", "utf8"));
  // A file whose set-up failed has no failed test, only skipped ones: count it as one failure.
  const broken = r.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed"));
  for (const f of broken) console.log(`failed to run: ${f.name}`);
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests + broken.length} failed`);
' || echo "tests: 0 passed, 1 failed"
exit $status
