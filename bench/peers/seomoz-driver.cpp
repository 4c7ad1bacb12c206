// Benchmark driver for the peer library seomoz simhash-cpp (https://github.com/seomoz/simhash-cpp, MIT).
// This file is simhash-wasm's own code (MIT); it only calls the library, which scripts/build-peers.sh builds
// outside the repository and links in. It is not part of the package.
//
// The library's text fingerprint is Simhash::hash_text<jenkins, Strspn> from its last release that still had
// one (commit a9b21b0, src/hash.hpp): tokens are runs of ASCII letters (strpbrk/strspn), each hashed with Bob
// Jenkins' lookup3 (hashlittle2, 64 bits), combined over a moving window of 3 tokens by its cyclic hash, and
// reduced to 64 bits. The near-duplicate search is Simhash::find_all from the current release (HEAD 1eb4a0a,
// src/simhash.cpp): m blocks, one sorted permuted table per choice of m - k leading blocks (README
// "Architecture"), pairs of distinct fingerprints within k bits, unverified.
//
// Input: documents as [u32 little-endian byte length][UTF-8 bytes] repeated (bench/real-corpus.ts writes it);
// optionally a group file, one u32 per document (documents of a group are planted near-duplicates), for recall.
// Output: one JSON object on stdout with counts and per-stage wall and CPU times in milliseconds.
//
// usage: seomoz-simhash --docs FILE [--groups FILE] [--k 12[,3...]] [--blocks auto|M[,...]]
// Each k runs find_all once on the same fingerprints; --blocks gives the block count per run (the last one
// repeats), "auto" k + 1.

// Standard headers first: the library's jenkins.h defines macros named mix, final and rot.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "simhash.h"  // current release: compute, find_all
#include "hash.hpp"   // text hashing of release a9b21b0: hash_text, jenkins, Strspn

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// CPU time of this process: on a loaded machine wall time also counts the waits for a core.
double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "seomoz-simhash: " << message << std::endl;
  std::exit(2);
}

std::vector<std::string> read_documents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open " + path);
  std::vector<std::string> docs;
  for (;;) {
    unsigned char len[4];
    if (!in.read(reinterpret_cast<char*>(len), 4)) break;
    uint32_t n = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24);
    std::string doc(n, '\0');
    if (n && !in.read(&doc[0], n)) fail("truncated document " + std::to_string(docs.size()) + " in " + path);
    docs.push_back(std::move(doc));
  }
  return docs;
}

std::vector<uint32_t> read_groups(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open " + path);
  std::vector<uint32_t> groups(n);
  if (!in.read(reinterpret_cast<char*>(groups.data()), n * 4)) fail(path + " has fewer than one u32 per document");
  return groups;
}

double choose(size_t n, size_t r) {
  double c = 1;
  for (size_t i = 0; i < r; ++i) c = c * (n - i) / (i + 1);
  return c;
}

// "auto" blocks: m = k + 1, the fewest tables (k + 1) with the shortest prefix. The library leaves m to the
// caller. On the real-text corpus (n ≈ 4·10^4, k = 12) a sweep measured find_all at 2.0, 5.4, 14.4 and 36 s of
// CPU for m = 13, 14, 15, 16: every table re-finds most near pairs and inserts them into the result set again,
// so more tables cost more than the shorter runs save. Far larger n may want more blocks (--blocks).
size_t auto_blocks(size_t k) { return k + 1; }

}  // namespace

int main(int argc, char** argv) {
  std::string docs_path, groups_path, blocks_arg = "auto";
  std::vector<size_t> ks = {12};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--docs") docs_path = value();
    else if (a == "--groups") groups_path = value();
    else if (a == "--blocks") blocks_arg = value();
    else if (a == "--k") {
      ks.clear();
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');) {
        char* end = nullptr;
        long k = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end || k < 1 || k > 63) fail("--k takes integers from 1 to 63, got " + item);
        ks.push_back(static_cast<size_t>(k));
      }
    } else fail("unknown argument " + a + " (usage: --docs FILE [--groups FILE] [--k 12[,3]] [--blocks auto|M[,...]])");
  }
  if (docs_path.empty()) fail("--docs FILE is required");
  std::vector<std::string> blocks_list;
  std::stringstream blocks_items(blocks_arg);
  for (std::string item; std::getline(blocks_items, item, ',');) blocks_list.push_back(item);
  if (blocks_list.empty()) fail("--blocks needs a value");

  auto t = Clock::now();
  std::vector<std::string> docs = read_documents(docs_path);
  double read_ms = ms_since(t);
  size_t bytes = 0;
  for (const auto& d : docs) bytes += d.size();
  std::vector<uint32_t> groups;
  if (!groups_path.empty()) groups = read_groups(groups_path, docs.size());

  // The library's pipeline, stage 1: one fingerprint per document.
  t = Clock::now();
  double c = cpu_ms();
  std::vector<Simhash::hash_t> fps(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) fps[i] = Simhash::hash_text<Simhash::jenkins, Simhash::Strspn>(docs[i].c_str());
  double fingerprint_ms = ms_since(t);
  double fingerprint_cpu = cpu_ms() - c;
  size_t zero = 0;
  for (auto fp : fps) zero += fp == 0;

  // Stage 2: find_all takes a set of distinct fingerprints.
  t = Clock::now();
  c = cpu_ms();
  std::unordered_set<Simhash::hash_t> distinct(fps.begin(), fps.end());
  double set_ms = ms_since(t);
  double set_cpu = cpu_ms() - c;

  // Documents per fingerprint, for turning fingerprint pairs back into document pairs (not timed: the library
  // itself stops at fingerprint pairs).
  std::unordered_map<uint64_t, uint64_t> docs_with;
  for (auto fp : fps) ++docs_with[fp];
  uint64_t same_fp_pairs = 0;
  for (const auto& e : docs_with) same_fp_pairs += e.second * (e.second - 1) / 2;

  std::vector<std::pair<size_t, size_t>> planted;
  if (!groups.empty()) {
    std::unordered_map<uint32_t, std::vector<size_t>> members;
    for (size_t i = 0; i < groups.size(); ++i) members[groups[i]].push_back(i);
    for (const auto& g : members)
      for (size_t x = 0; x < g.second.size(); ++x)
        for (size_t y = x + 1; y < g.second.size(); ++y) planted.emplace_back(g.second[x], g.second[y]);
  }

  std::ostringstream runs;
  for (size_t r = 0; r < ks.size(); ++r) {
    size_t k = ks[r];
    std::string b = r < blocks_list.size() ? blocks_list[r] : blocks_list.back();
    size_t blocks = b == "auto" ? auto_blocks(k) : std::strtoul(b.c_str(), nullptr, 10);
    if (blocks <= k || blocks > 64) fail("blocks must be greater than k and at most 64");
    t = Clock::now();
    c = cpu_ms();
    Simhash::matches_t matches = Simhash::find_all(distinct, blocks, k);
    double find_all_ms = ms_since(t);
    double find_all_cpu = cpu_ms() - c;

    uint64_t doc_pairs = same_fp_pairs;
    for (const auto& m : matches) doc_pairs += docs_with[m.first] * docs_with[m.second];
    uint64_t planted_found = 0;
    for (const auto& p : planted) {
      uint64_t a = fps[p.first], b = fps[p.second];
      if (a == b || matches.count(std::make_pair(std::min(a, b), std::max(a, b)))) ++planted_found;
    }
    runs << (r ? "," : "") << "{\"k\":" << k << ",\"blocks\":" << blocks << ",\"tables\":" << choose(blocks, k)
         << ",\"findAllMs\":" << find_all_ms << ",\"findAllCpuMs\":" << find_all_cpu << ",\"fingerprintPairs\":" << matches.size()
         << ",\"documentPairs\":" << doc_pairs << ",\"plantedFound\":" << planted_found
         << ",\"pipelineMs\":" << fingerprint_ms + set_ms + find_all_ms
         << ",\"pipelineCpuMs\":" << fingerprint_cpu + set_cpu + find_all_cpu << "}";
  }

  std::cout << "{\"peer\":\"seomoz/simhash-cpp\",\"documents\":" << docs.size() << ",\"bytes\":" << bytes
            << ",\"readMs\":" << read_ms << ",\"fingerprintMs\":" << fingerprint_ms
            << ",\"fingerprintCpuMs\":" << fingerprint_cpu << ",\"setMs\":" << set_ms << ",\"setCpuMs\":" << set_cpu
            << ",\"distinctFingerprints\":" << distinct.size() << ",\"zeroFingerprints\":" << zero
            << ",\"sameFingerprintPairs\":" << same_fp_pairs << ",\"plantedPairs\":" << planted.size()
            << ",\"runs\":[" << runs.str() << "]}" << std::endl;
  return 0;
}
