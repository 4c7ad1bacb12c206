#!/bin/sh
# Installs Debian's Unicode Character Database (package unicode-data: /usr/share/unicode/*.txt), the independent
# source test/fingerprint/unicode.test.ts checks every code point's class and case folding against.
# Idempotent: a second run only checks the files. Needs root (CI runs as root) or sudo.
set -eu
UCD=/usr/share/unicode
if [ -r "$UCD/UnicodeData.txt" ] && [ -r "$UCD/Scripts.txt" ] && [ -r "$UCD/CaseFolding.txt" ] &&
  [ -r "$UCD/DerivedCoreProperties.txt" ]; then
  echo "unicode-data already installed: $(head -n 1 "$UCD/Scripts.txt")"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y unicode-data
head -n 1 "$UCD/Scripts.txt"
