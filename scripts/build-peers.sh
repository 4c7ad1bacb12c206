#!/usr/bin/env bash
# Builds the native peer libraries that `npm run bench -- peers` compares against, outside the repository.
#
#   scripts/build-peers.sh SIMHASH_CPP_GIT        (or SIMHASH_CPP_GIT=... scripts/build-peers.sh)
#
# SIMHASH_CPP_GIT is a git repository (a clone or a bare mirror) of seomoz/simhash-cpp holding two commits:
# 1eb4a0a (the current release: find_all) and a9b21b0 (the last release with a text fingerprint, hash_text).
# Nothing is downloaded here: CI and most machines cannot reach GitHub, so get the repository however you can
# and pass its path. No code of the peer is copied into this repository; it is exported from that git repository
# into the build directory and compiled with the driver bench/peers/seomoz-driver.cpp (ours).
#
# Output: $SIMHASH_PEERS_DIR/bin/seomoz-simhash (default ~/.cache/simhash-peers), which bench/peers.bench.ts runs.
set -euo pipefail

repo="${1:-${SIMHASH_CPP_GIT:-}}"
out="${SIMHASH_PEERS_DIR:-$HOME/.cache/simhash-peers}"
search_commit=1eb4a0a
text_commit=a9b21b0
here="$(cd "$(dirname "$0")/.." && pwd)"

if [ -z "$repo" ]; then
  echo "usage: scripts/build-peers.sh PATH-TO-seomoz/simhash-cpp-git-repository (or set SIMHASH_CPP_GIT)" >&2
  exit 2
fi
if [ -d "$repo/.git" ]; then gitdir="$repo/.git"; else gitdir="$repo"; fi
for c in "$search_commit" "$text_commit"; do
  if ! git --git-dir="$gitdir" cat-file -e "$c^{commit}" 2>/dev/null; then
    echo "build-peers: $repo is not a git repository of seomoz/simhash-cpp with commit $c" >&2
    exit 2
  fi
done
case "$(cd "$here" && pwd)/" in "$(mkdir -p "$out" && cd "$out" && pwd)/"*)
  echo "build-peers: the output directory must be outside the repository" >&2; exit 2;;
esac

src="$out/src/simhash-cpp"
rm -rf "$src" && mkdir -p "$src/search" "$src/text" "$src/shim" "$out/bin"
git --git-dir="$gitdir" archive "$search_commit" | tar -x -C "$src/search"
git --git-dir="$gitdir" archive "$text_commit" | tar -x -C "$src/text"
# a9b21b0's common.h takes hash_t from libJudy's Word_t (unsigned long); hash_text needs nothing else of Judy.
printf '#include <cstdint>\ntypedef unsigned long Word_t;\n' >"$src/shim/Judy.h"

"${CXX:-g++}" -O3 -march=native -std=c++11 -w \
  -I"$src/search/include" -I"$src/text/src" -I"$src/shim" \
  -o "$out/bin/seomoz-simhash" \
  "$here/bench/peers/seomoz-driver.cpp" "$src/search/src/simhash.cpp" "$src/search/src/permutation.cpp"
echo "built $out/bin/seomoz-simhash (seomoz/simhash-cpp $search_commit find_all + $text_commit hash_text)"
