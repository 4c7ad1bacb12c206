#!/usr/bin/env bash
# A local ClickHouse cluster for the tests, CI, the bench and docs/scaling-out.md's quick start (src/clickhouse/).
#   start N    installs Debian's clickhouse-server and clickhouse-client when missing, then starts shards 1..N
#              (a shard already running stays as it is) and waits until each answers
#   stop [I]   stops every shard, or shard I alone, by the pid in its pid file
#   status     one line per shard: running or stopped, and its HTTP URL
#   urls       the shards' HTTP URLs, comma-separated (what SIMHASH_CLICKHOUSE takes)
# Each shard has its own folder under $SIMHASH_CLICKHOUSE_DIR (default /tmp/simhash-clickhouse): config, data, logs,
# pid file. Shard I listens on 127.0.0.1 only: HTTP $SIMHASH_CLICKHOUSE_PORT + 10·(I−1) (default 18123), native TCP
# +1, interserver +2. All shards read one include file, remote_servers.xml, naming cluster "simhash" of the N shards
# (no replicas, no ZooKeeper). Runs as root or as any user that can write the folder.
set -euo pipefail

ROOT=${SIMHASH_CLICKHOUSE_DIR:-/tmp/simhash-clickhouse}
BASE=${SIMHASH_CLICKHOUSE_PORT:-18123}
SERVER=/usr/sbin/clickhouse-server

http_port() { echo $((BASE + 10 * ($1 - 1))); }
pid_of() { [[ -f "$ROOT/shard$1/server.pid" ]] && cat "$ROOT/shard$1/server.pid"; }
running() {
  local pid
  pid=$(pid_of "$1") || return 1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null
}
shard_count() { ls -d "$ROOT"/shard* 2>/dev/null | wc -l; }

install() {
  if [[ -x "$SERVER" && -x /usr/bin/clickhouse-client ]]; then return; fi
  local sudo=''
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache show clickhouse-server >/dev/null 2>&1; then $sudo apt-get update -q; fi
  $sudo apt-get install -y -q clickhouse-server clickhouse-client >/dev/null
}

write_remote_servers() {
  local n=$1 i
  {
    echo '<yandex><clickhouse_remote_servers><simhash>'
    for ((i = 1; i <= n; i++)); do
      echo "  <shard><replica><host>127.0.0.1</host><port>$(($(http_port "$i") + 1))</port></replica></shard>"
    done
    echo '</simhash></clickhouse_remote_servers></yandex>'
  } >"$ROOT/remote_servers.xml"
}

write_config() {
  local i=$1 dir=$ROOT/shard$1 port
  port=$(http_port "$i")
  mkdir -p "$dir"/{data,tmp,user_files,format_schemas,log}
  cat >"$dir/config.xml" <<EOF
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log><errorlog>$dir/log/server.err.log</errorlog>
    <size>50M</size><count>1</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$port</http_port>
  <tcp_port>$((port + 1))</tcp_port>
  <interserver_http_port>$((port + 2))</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/format_schemas/</format_schema_path>
  <users_config>$ROOT/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>268435456</mark_cache_size>
  <uncompressed_cache_size>268435456</uncompressed_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <include_from>$ROOT/remote_servers.xml</include_from>
  <remote_servers incl="clickhouse_remote_servers" />
</yandex>
EOF
}

write_users() {
  cat >"$ROOT/users.xml" <<'EOF'
<yandex>
  <profiles><default><max_memory_usage>12000000000</max_memory_usage><load_balancing>random</load_balancing></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows>
    <read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
EOF
}

wait_answers() {
  local i=$1 url deadline=$((SECONDS + 60))
  url="http://127.0.0.1:$(http_port "$i")/"
  until [[ $(curl -sf "${url}?query=SELECT%201" 2>/dev/null) == 1 ]]; do
    if ! running "$i"; then
      echo "clickhouse shard $i exited while starting; last log lines:" >&2
      tail -n 20 "$ROOT/shard$i/log/server.err.log" "$ROOT/shard$i/stdout.log" >&2 2>/dev/null || true
      exit 1
    fi
    if ((SECONDS > deadline)); then
      echo "clickhouse shard $i does not answer on $url after 60 s" >&2
      exit 1
    fi
    sleep 0.2
  done
}

start() {
  local n=${1:?usage: clickhouse-cluster.sh start N}
  [[ "$n" =~ ^[1-9][0-9]?$ ]] || { echo "N must be a number from 1 to 99, got '$n'" >&2; exit 2; }
  install
  mkdir -p "$ROOT"
  write_users
  write_remote_servers "$n"
  local i
  for ((i = 1; i <= n; i++)); do
    running "$i" && continue
    write_config "$i"
    # setsid: the server outlives this script (and a CI step's process group) until stop kills it by pid.
    setsid "$SERVER" --config-file="$ROOT/shard$i/config.xml" >"$ROOT/shard$i/stdout.log" 2>&1 </dev/null &
    echo $! >"$ROOT/shard$i/server.pid"
  done
  for ((i = 1; i <= n; i++)); do wait_answers "$i"; done
  check_loopback
  echo "clickhouse cluster \"simhash\" of $n shards: $(urls "$n")"
}

# Every socket of every shard must be on 127.0.0.1.
check_loopback() {
  local i pid bad
  for ((i = 1; i <= $(shard_count); i++)); do
    running "$i" || continue
    pid=$(pid_of "$i")
    bad=$(ss -ltnpH 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | grep -v '^127\.0\.0\.1:' || true)
    if [[ -n "$bad" ]]; then
      echo "clickhouse shard $i listens on non-loopback addresses: $bad" >&2
      exit 1
    fi
  done
}

stop_one() {
  local i=$1 pid
  pid=$(pid_of "$i") || return 0
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  fi
  rm -f "$ROOT/shard$i/server.pid"
}

stop() {
  if [[ -n "${1:-}" ]]; then stop_one "$1"; return; fi
  local i
  for ((i = 1; i <= $(shard_count); i++)); do stop_one "$i"; done
}

urls() {
  local n=${1:-$(shard_count)} i out=''
  for ((i = 1; i <= n; i++)); do out+="${out:+,}http://127.0.0.1:$(http_port "$i")"; done
  echo "$out"
}

status() {
  local i
  for ((i = 1; i <= $(shard_count); i++)); do
    if running "$i"; then echo "shard $i running (pid $(pid_of "$i")) http://127.0.0.1:$(http_port "$i")"
    else echo "shard $i stopped"; fi
  done
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  status) status ;;
  urls) urls "${2:-}" ;;
  *) echo "usage: $0 start N | stop [I] | status | urls" >&2; exit 2 ;;
esac
