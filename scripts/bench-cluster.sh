#!/usr/bin/env bash
# RegionKit's cluster mode measured on this machine (issue 18): a 3-node NATS cluster (MQTT listener,
# JetStream R3, ESPresense topics partitioned by beacon id into 16 partitions), a private PostgreSQL,
# and 1, 2, then 3 engines (`regionkit run` with a cluster: block, each on a fresh database); for each
# engine count, `regionkit bench cluster` measures publish → logged-event latency on the idle cluster,
# then sightings/s of a synthetic fleet (1,000 scanners × 100 beacons) through brokers and engines.
# Everything runs on 127.0.0.1 and is stopped at the end; on a small machine every process shares
# the same cores, which is the stated limit of the figures.
#
#   scripts/bench-cluster.sh                     engines 1 2 3, 20 s of fleet each, QoS 1
#
# Options: --engines "1 2 3", --seconds S, --qos 0|1, --samples N (latency), --publishers N,
# --rate N (offered sightings/s, all publishers together; default 0: as fast as they can),
# --regionkit PATH (use that binary instead of building release), --keep (keep the directory).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENGINES="1 2 3" SECONDS_EACH=20 QOS=1 SAMPLES=100 PUBLISHERS=6 RATE=0 REGIONKIT="" KEEP=0
PARTITIONS=16 UUID_TEXT="5A4BCFCE-174E-4BAC-A814-092E77F6B7E5" FLEET_BEACONS=100

BENCH_NAME=bench-cluster
# shellcheck source=lib/private-postgres.sh
source "$ROOT/scripts/lib/private-postgres.sh"

while (($#)); do
    case "$1" in
        --engines) (($# >= 2)) || die "--engines needs a list"; ENGINES=$2
            for n in $ENGINES; do positive --engines "$n"; ((n <= 8)) || die "--engines: at most 8 per run"; done; shift ;;
        --seconds|--samples|--publishers|--rate)
            (($# >= 2)) || die "$1 needs a value"; positive "$1" "$2"
            case "$1" in --seconds) SECONDS_EACH=$2 ;; --samples) SAMPLES=$2 ;; --publishers) PUBLISHERS=$2 ;; --rate) RATE=$2 ;; esac; shift ;;
        --qos) (($# >= 2)) || die "--qos needs 0 or 1"; [[ "$2" == 0 || "$2" == 1 ]] || die "--qos must be 0 or 1"; QOS=$2; shift ;;
        --regionkit) (($# >= 2)) || die "--regionkit needs a path"; REGIONKIT=$2; shift ;;
        --keep) KEEP=1 ;;
        -h|--help) usage 15; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
    shift
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/regionkit-bench-cluster.XXXXXX")"
chmod 755 "$WORK"
PG_DATA="$WORK/pg/data" PG_BIN="" PG_STARTED=0
NATS_PIDS=() ENGINE_PIDS=()
stop_engines() {
    local pid
    for pid in "${ENGINE_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${ENGINE_PIDS[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    ENGINE_PIDS=()
}
stop_all() {
    local pid
    stop_engines
    for pid in "${NATS_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${NATS_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
bench_traps stop_all

# --- tools -------------------------------------------------------------------------------------
command -v python3 >/dev/null || apt_install python3
NATS_SERVER="$(command -v nats-server || true)"
[[ -n "$NATS_SERVER" ]] || { apt_install nats-server; NATS_SERVER="$(command -v nats-server)"; }
pg_find_or_install
if [[ -z "$REGIONKIT" ]]; then
    log "swift build -c release --product regionkit"
    (cd "$ROOT" && swift build -c release --product regionkit >"$WORK/build.log" 2>&1) \
        || { tail -n 30 "$WORK/build.log" >&2; die "release build failed"; }
    REGIONKIT="$ROOT/.build/release/regionkit"
fi
[[ -x "$REGIONKIT" ]] || die "regionkit binary not found at $REGIONKIT"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --- PostgreSQL and the 3 NATS nodes -------------------------------------------------------------
PG_PORT="$(free_port)"
log "PostgreSQL $MAJOR: initdb and start on 127.0.0.1:$PG_PORT"
pg_private_start "$PG_PORT" regionkit "-c max_connections=300"
CLIENT_PORTS=() ROUTE_PORTS=() MQTT_PORTS=()
for i in 0 1 2; do CLIENT_PORTS+=("$(free_port)"); ROUTE_PORTS+=("$(free_port)"); MQTT_PORTS+=("$(free_port)"); done
for i in 0 1 2; do
    # The other two nodes only: with itself in its route list, nats-server 2.9.10 delivered QoS 0
    # messages through the mapping to some nodes' subscribers and not others (docs/cluster.md).
    ROUTES=""; for j in 0 1 2; do ((j == i)) || ROUTES+="nats://127.0.0.1:${ROUTE_PORTS[$j]}, "; done
    mkdir -p "$WORK/nats-$i"
    cat >"$WORK/nats-$i/nats.conf" <<CONF
server_name: nats-$i
listen: 127.0.0.1:${CLIENT_PORTS[$i]}
jetstream { store_dir: "$WORK/nats-$i/js" }
mqtt { listen: 127.0.0.1:${MQTT_PORTS[$i]}, ack_wait: "30s", stream_replicas: 3, consumer_replicas: 3 }
cluster { name: regionkit-bench, listen: 127.0.0.1:${ROUTE_PORTS[$i]}, routes: [${ROUTES%, }] }
mappings = {
  "espresense.devices.*.*": "regionkit.part.{{partition($PARTITIONS,1)}}.espresense.devices.{{wildcard(1)}}.{{wildcard(2)}}"
}
CONF
    "$NATS_SERVER" -c "$WORK/nats-$i/nats.conf" >"$WORK/nats-$i/log" 2>&1 &
    NATS_PIDS+=("$!")
done
for i in 0 1 2; do
    for _ in $(seq 1 300); do listening "${MQTT_PORTS[$i]}" && break; sleep 0.2; done
    listening "${MQTT_PORTS[$i]}" || { tail -n 20 "$WORK/nats-$i/log" >&2; die "nats-$i: MQTT listener not up"; }
done
URLS=() ; for i in 0 1 2; do URLS+=("mqtt://127.0.0.1:${MQTT_PORTS[$i]}"); done
BROKERS="$(IFS=,; echo "${URLS[*]}")"
log "NATS: 3 nodes, MQTT on ${MQTT_PORTS[*]}"

# --- one run per engine count ----------------------------------------------------------------------
RESULTS="$WORK/results.jsonl"
for n in $ENGINES; do
    db="cluster_$n"
    psql -X -q -h 127.0.0.1 -p "$PG_PORT" -U regionkit -d postgres -c "CREATE DATABASE $db" >/dev/null
    for ((e = 0; e < n; e++)); do
        config="$WORK/engine-$n-$e.yaml"
        {
            echo "profile: responsive"
            echo "regions:"
            echo "  - {identifier: site, uuid: $UUID_TEXT}"
            for ((b = 0; b < FLEET_BEACONS; b++)); do echo "  - {identifier: fleet-$b, uuid: $UUID_TEXT, major: 2, minor: $b}"; done
            for ((s = 0; s < SAMPLES; s++)); do echo "  - {identifier: lat-$s, uuid: $UUID_TEXT, major: 3, minor: $s}"; done
            echo "sources: [{mqtt: {format: espresense}}]"
            echo "mqtt: {urls: [$(printf '"%s", ' "${URLS[@]:e%3}" "${URLS[@]:0:e%3}" | sed 's/, $//')], site: bench$n, keepAlive: 10}"
            echo "cluster: {partitions: $PARTITIONS, member: engine-$e, leaseSeconds: 3}"
        } >"$config"
        "$REGIONKIT" run --config "$config" --store "postgres://regionkit@127.0.0.1:$PG_PORT/$db" --log-level warning \
            2>"$WORK/engine-$n-$e.log" >/dev/null &
        ENGINE_PIDS+=("$!")
    done
    log "$n engine(s) started; measuring"
    "$REGIONKIT" bench cluster --brokers "$BROKERS" --store "postgres://regionkit@127.0.0.1:$PG_PORT/$db" --engines "$n" \
        --partitions "$PARTITIONS" --uuid "$UUID_TEXT" --samples "$SAMPLES" --seconds "$SECONDS_EACH" --beacons "$FLEET_BEACONS" \
        --scanners 1000 --publishers "$PUBLISHERS" --qos "$QOS" --rate "$RATE" --json >>"$RESULTS" \
        || { tail -n 20 "$WORK"/engine-"$n"-*.log >&2; die "bench cluster failed with $n engine(s)"; }
    tail -n 1 "$RESULTS" >&2
    stop_engines
done

# --- the table ---------------------------------------------------------------------------------------
CPU="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo
echo "RegionKit cluster on one machine: ${CPU:-unknown CPU}, nproc $(nproc), load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo "regionkit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?') ($REGIONKIT), nats-server $("$NATS_SERVER" --version | awk '{print $2}'), PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}'); $(date -u '+%Y-%m-%d %H:%M UTC')"
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
base = rows[0]["ingestPerSecond"] if rows else 0
print("| engines | latency p50 | latency p99 | offered/s | published/s (QoS %d) | ingested/s | delivered | scaling vs 1st |" % (rows[0]["qos"] if rows else 0))
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    delivered = 100.0 * r["ingested"] / max(1, r["published"])
    print("| %d | %.1f ms | %.1f ms | %s | %.0f | %.0f | %.1f %% | %.2f× |" % (
        r["engines"], r["latencyP50Ms"], r["latencyP99Ms"], r["offeredPerSecond"] or "max", r["published"] / r["publishSeconds"], r["ingestPerSecond"],
        delivered, r["ingestPerSecond"] / base if base else 0))
PY
