// Whether the ClickHouse cluster tests run: SIMHASH_CLICKHOUSE names the shards' HTTP URLs (comma-separated, in the
// cluster's order), as `bash scripts/clickhouse-cluster.sh urls` prints them; .ci/run starts the cluster and sets it.
// Unset, the tests are skipped with the reason in their title, unless SIMHASH_E2E=1 (CI), which requires them.
import { e2eMode } from '../e2e/gate.js';

export interface ClickHouseGate {
  urls: string[];
  /** Why the tests do not run. */
  skipped?: string;
  /** Why they fail at once (SIMHASH_E2E=1 without a cluster). */
  missing?: string;
}

const HOW =
  'bash scripts/clickhouse-cluster.sh start 3; export SIMHASH_CLICKHOUSE=$(bash scripts/clickhouse-cluster.sh urls)';

export function clickhouseGate(value = process.env.SIMHASH_CLICKHOUSE): ClickHouseGate {
  const urls = (value ?? '').split(',').filter((u) => u.trim() !== '');
  if (urls.length > 0) return { urls };
  if (e2eMode() === 'required') return { urls, missing: `SIMHASH_E2E=1 requires a ClickHouse cluster: ${HOW}` };
  return { urls, skipped: `ClickHouse cluster tests (SIMHASH_CLICKHOUSE unset; ${HOW})` };
}
