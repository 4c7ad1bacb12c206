// The candidate pairs that dedup() and dedupStream keep: verified by shingle Jaccard through pair-checks.ts with the
// skipping rule of the cluster mode (every pair when all pairs are asked for), or, without verification, every pair
// (a spanning forest of them for connected clusters explained). One machinery for both paths: only where the sets
// come from differs.
import type { NearDuplicatePairs } from '../join/join.js';
import type { PairsMode } from './dedup-groups.js';
import { spanningPairs } from './dedup-groups.js';
import { PairChecks, type SetSource, pairFlags } from './pair-checks.js';
import type { PrebuiltSets } from './shingle-sets.js';
import { keepFlagged } from './verify-pairs.js';

export interface CandidateChecks {
  verify: { threshold: number; width: number } | false;
  mode: 'connected' | 'centre';
  pairsMode: PairsMode;
  /** Where the sets come from (any value when verify is false). */
  source: SetSource | null;
  windowBytes: number;
  prebuilt?: PrebuiltSets | null;
}

/**
 * The kept pairs of `candidates` (ordered by (a, b): clusters then form early) over n documents, and how many pairs
 * were tested. Connected clusters explained: a pair whose documents are already connected is not tested; centre
 * clusters explained: a pair that cannot make a centre take a document is not tested. The clusters are those of
 * testing every pair.
 */
export function verifiedCandidates(
  n: number,
  candidates: NearDuplicatePairs,
  o: CandidateChecks,
): { verified: NearDuplicatePairs; checks: number } {
  if (!o.verify || !o.source) {
    const explained = o.mode === 'connected' && o.pairsMode === 'explain';
    return { verified: explained ? spanningPairs(n, candidates) : candidates, checks: 0 };
  }
  const checks =
    o.pairsMode === 'all' ? PairChecks.all() : o.mode === 'connected' ? PairChecks.connected(n) : PairChecks.centre(n);
  const flags = pairFlags(n, o.source, candidates.a, candidates.b, o.verify, checks, o.windowBytes, o.prebuilt ?? null);
  return { verified: keepFlagged(candidates, flags), checks: checks.checks };
}
