# Sourced by the benchmark scripts (bench-compare.sh, bench-cluster.sh): privileged steps, Debian
# installs, and a private PostgreSQL cluster (initdb, then postgres on 127.0.0.1 and a given port,
# its socket in a private directory, fsync off), stopped by pg_private_stop.
# The caller sets BENCH_NAME (its name in messages) before sourcing, and WORK (a temporary
# directory) before calling the PostgreSQL functions.

log() { printf '%s: %s\n' "$BENCH_NAME" "$*" >&2; }
die() { printf '%s: error: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }
# usage LAST_LINE: the script's header comment (lines 2…LAST_LINE) without the '#'.
usage() { sed -n "2,${1}p" "$0" | sed 's/^# \{0,1\}//'; }
positive() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1 needs a positive integer, got '$2'"; }

# Privileged steps: directly as root, else through sudo when it works without a password prompt.
privileged() {
    if ((EUID == 0)); then "$@"
    elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo -n "$@"
    else die "need root to run: $* (run it yourself, or run this script as root or with passwordless sudo)"
    fi
}
APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null || die "apt-get not found: install $* yourself"
    if ((!APT_UPDATED)); then log "apt-get update"; privileged apt-get update -qq >/dev/null; APT_UPDATED=1; fi
    log "apt-get install $*"
    privileged env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >"$WORK/apt.log" 2>&1 \
        || { tail -n 20 "$WORK/apt.log" >&2; die "apt-get install $* failed"; }
}

# PostgreSQL refuses to run as root: then the cluster belongs to the 'postgres' system user.
as_pg() {
    if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_major() { { ls -d /usr/lib/postgresql/*/bin/pg_ctl 2>/dev/null || true; } | sed -E 's|/usr/lib/postgresql/([0-9]+)/.*|\1|' | sort -n | tail -n 1; }

# Sets PG_BIN (installing postgresql when no server is found) and MAJOR.
pg_find_or_install() {
    MAJOR="$(pg_major)"
    if [[ -z "$MAJOR" ]]; then apt_install postgresql; MAJOR="$(pg_major)"; fi
    [[ -n "$MAJOR" ]] || die "no PostgreSQL server found under /usr/lib/postgresql after installing it"
    PG_BIN="/usr/lib/postgresql/$MAJOR/bin"
    command -v psql >/dev/null || apt_install postgresql-client
    if ((EUID == 0)); then id postgres >/dev/null 2>&1 || die "running as root needs the 'postgres' system user (from the postgresql package)"; fi
}

# pg_private_start PORT USER [EXTRA_SERVER_OPTIONS]: initdb in $WORK/pg/data (trust for USER) and
# start on 127.0.0.1:PORT; sets PG_DATA and PG_STARTED=1.
pg_private_start() {
    local port=$1 user=$2 extra=${3:-}
    PG_DATA="$WORK/pg/data"
    mkdir -p "$WORK/pg/socket"
    if ((EUID == 0)); then chown -R postgres "$WORK/pg"; fi
    as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U "$user" --auth=trust -E UTF8 --no-locale >"$WORK/initdb.log" 2>&1 \
        || { tail -n 20 "$WORK/initdb.log" >&2; die "initdb failed"; }
    PG_STARTED=1
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$WORK/pg/server.log" -w -t 60 \
        -o "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$WORK/pg/socket -c fsync=off $extra" \
        start >/dev/null || { tail -n 20 "$WORK/pg/server.log" >&2 2>/dev/null || true; die "pg_ctl start failed"; }
}

# Stops the private cluster if it runs (fast shutdown, else SIGKILL of the postmaster).
pg_private_stop() {
    if ((${PG_STARTED:-0})) && [[ -f "$PG_DATA/postmaster.pid" ]]; then
        log "stopping the private PostgreSQL cluster"
        if ! as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1; then
            local pid
            pid="$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null || true)"
            if [[ "$pid" =~ ^[0-9]+$ ]]; then log "pg_ctl stop failed; killing postmaster $pid"; kill -9 "$pid" 2>/dev/null || true; fi
        fi
    fi
    PG_STARTED=0
}

# bench_traps [HOOK]: at exit run HOOK (stop what the script started), stop the private PostgreSQL,
# remove $WORK (kept with KEEP=1); INT and TERM exit with 130 and 143 through it.
bench_traps() {
    BENCH_EXIT_HOOK=${1:-}
    trap _bench_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}
_bench_exit() {
    local status=$?
    if [[ -n "${BENCH_EXIT_HOOK:-}" ]]; then "$BENCH_EXIT_HOOK"; fi
    pg_private_stop
    if ((${KEEP:-0})); then log "kept $WORK"; else rm -rf "$WORK"; fi
    exit "$status"
}
