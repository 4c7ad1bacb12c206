#!/bin/sh
# Installs Debian's gzip and zstd, which write the compressed fixtures of test/cli/compressed-inputs.test.ts (tools
# independent of the reader under test), unless both are there. Idempotent. Needs root (CI runs as root) or sudo.
set -eu
if command -v gzip >/dev/null 2>&1 && command -v zstd >/dev/null 2>&1; then
  echo "gzip and zstd already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y gzip zstd
zstd --version
