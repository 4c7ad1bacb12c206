#!/bin/sh
# Installs Debian's Chromium for the headless browser tests (test/e2e/browser.test.ts), unless it is already there.
# Idempotent: a second run only checks the binary. Needs root (CI runs as root) or sudo.
set -eu
CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  echo "chromium already installed: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y chromium
"$CHROMIUM" --version
