#!/usr/bin/env bash
# Runs scripts/runtime-smoke.mjs on the built package (dist/, from `npm run build`) under Node, Bun and Deno, with
# the SIMD build the engine picks and with the scalar build, and fails with a diff when Bun's or Deno's output
# differs from Node's. Bun and Deno come from the npm registry at the pinned versions below, installed into
# .tools/runtimes (gitignored) when missing, with --ignore-scripts: their platform packages (@oven/bun-<platform>,
# @deno/<platform>) hold the binaries, so no postinstall script runs and nothing is downloaded from elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BUN_VERSION=1.4.5
DENO_VERSION=2.9.6
TOOLS=$ROOT/.tools/runtimes
TIMEOUT=300 # seconds per run: a pool worker that never answers, or a process kept alive, fails rather than hangs

if [ ! -f dist/index.mjs ]; then
  echo "runtime-smoke: dist/index.mjs is missing; run npm run build first" >&2
  exit 1
fi

# The binary among $2... that prints version $1 (bun: "1.4.5", deno: "deno 2.9.6 (...)"), or nothing.
find_binary() {
  local want=$1
  shift
  local bin version
  for bin in "$@"; do
    [ -x "$bin" ] || continue
    version=$("$bin" --version 2>/dev/null || true)
    case "${version%%$'\n'*} " in
      "$want "* | *" $want "*)
        echo "$bin"
        return
        ;;
    esac
  done
}

bun_binary() { find_binary "$BUN_VERSION" "$TOOLS"/node_modules/@oven/bun-*/bin/bun; }
deno_binary() { find_binary "$DENO_VERSION" "$TOOLS"/node_modules/@deno/*/deno; }

BUN=$(bun_binary)
DENO=$(deno_binary)
if [ -z "$BUN" ] || [ -z "$DENO" ]; then
  echo "runtime-smoke: installing bun@$BUN_VERSION and deno@$DENO_VERSION from npm into $TOOLS"
  mkdir -p "$TOOLS"
  npm install --prefix "$TOOLS" --no-save --no-audit --no-fund --ignore-scripts \
    "bun@$BUN_VERSION" "deno@$DENO_VERSION"
  BUN=$(bun_binary)
  DENO=$(deno_binary)
fi
if [ -z "$BUN" ]; then
  echo "runtime-smoke: no runnable bun $BUN_VERSION in $TOOLS/node_modules/@oven (no platform package for $(uname -sm)?)" >&2
  exit 1
fi
if [ -z "$DENO" ]; then
  echo "runtime-smoke: no runnable deno $DENO_VERSION in $TOOLS/node_modules/@deno (no platform package for $(uname -sm)?)" >&2
  exit 1
fi

# Deno keeps its cache in the tool folder, checks for no updates and writes no colours; Bun caches no transpiled files.
export DENO_DIR=$TOOLS/deno-dir DENO_NO_UPDATE_CHECK=1 NO_COLOR=1 BUN_RUNTIME_TRANSPILER_CACHE_PATH=0

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
failed=0

# run NAME BUILD COMMAND...: the suite's JSON into $OUT/NAME-BUILD.json, its time on stdout.
run() {
  local name=$1 build=$2
  shift 2
  local start end
  start=$(date +%s%N)
  if ! timeout "$TIMEOUT" "$@" scripts/runtime-smoke.mjs "$build" >"$OUT/$name-$build.json" 2>"$OUT/$name-$build.err"; then
    echo "runtime-smoke: FAILED on $name ($build build):" >&2
    cat "$OUT/$name-$build.err" >&2
    failed=1
    return
  fi
  end=$(date +%s%N)
  local said
  said=$(tail -n 1 "$OUT/$name-$build.err")
  printf 'runtime-smoke: %-4s %-6s %5d ms  (%s)\n' "$name" "$build" $(((end - start) / 1000000)) "${said#runtime-smoke: }"
}

echo "runtime-smoke: node $(node --version), bun $("$BUN" --version), $("$DENO" --version | head -n 1)"
for build in auto scalar; do
  run node "$build" node
  [ -s "$OUT/node-$build.json" ] || continue
  run bun "$build" "$BUN"
  run deno "$build" "$DENO" run --allow-read="$ROOT" --no-prompt
  for name in bun deno; do
    [ -s "$OUT/$name-$build.json" ] || continue
    if ! diff -u --label "node ($build build)" --label "$name ($build build)" \
      "$OUT/node-$build.json" "$OUT/$name-$build.json" >"$OUT/$name-$build.diff"; then
      echo "runtime-smoke: $name's results differ from node's ($build build):" >&2
      head -n 200 "$OUT/$name-$build.diff" >&2
      failed=1
    fi
  done
done

if [ "$failed" -ne 0 ]; then
  echo "runtime-smoke: FAILED" >&2
  exit 1
fi
echo "runtime-smoke: bun $BUN_VERSION and deno $DENO_VERSION match node"
