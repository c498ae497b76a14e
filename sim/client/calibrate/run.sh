#!/usr/bin/env bash
# Calibration of the client and server cost layer (package sim/client) on
# real servers. Not part of go test: it installs servers and takes minutes.
#
# Usage (as root, on the machine whose figures the defaults should be):
#   sim/client/calibrate/run.sh [setup] [pg] [mysql] [pingpong]   (default: pg mysql pingpong)
#
#   setup    : installs PostgreSQL, MariaDB and sysbench from Debian's
#              packages (apt-get install postgresql mariadb-server sysbench),
#              which start both servers on loopback
#   pg       : pgbench -S (select-only) and the TPC-B-like script with
#              --protocol simple, extended and prepared, four clients:
#              the prepared/simple ratio is parse+plan against the rest,
#              extended/simple the unnamed statement's extra messages
#   mysql    : sysbench oltp_point_select with --db-ps-mode=disable and
#              auto: text against server-side prepared statements
#   pingpong : a loopback TCP round trip (the network model's RoundTrip
#              for a client on the server's machine) and the cost of one
#              small read system call
#
# pgbench and sysbench are C clients (libpq, libmysqlclient): they read a
# response with one system call into a buffer and do not make the extra
# read per packet of Connector/J's path (its 4-byte length prefix, then
# the payload). The pingpong step measures that per-message cost
# separately: a read of 4 bytes then of the rest against one read of the
# whole message.
#
# Output: one "name value unit" line per figure on standard output and in
# $OUT (default sim/client/calibrate/results-<date>.txt). Put the figures
# in client.DefaultParams (and a network profile for the round trip) and
# check them in with the output.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE/results-$(date +%Y%m%d).txt}
CLIENTS=${CLIENTS:-4}
SECS=${SECS:-30}
SCALE=${SCALE:-10}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(pg mysql pingpong)

say() { echo "$@" | tee -a "$OUT"; }

setup() {
  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql mariadb-server
  command -v sysbench >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y sysbench
}

tps() { sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1; }

pg() {
  local db=calib
  su postgres -c "psql -qc 'DROP DATABASE IF EXISTS $db' -c 'CREATE DATABASE $db'" >/dev/null
  su postgres -c "pgbench -i -q -s $SCALE $db" >/dev/null 2>&1
  for script in select-only tpcb-like; do
    local flag=-S
    [ $script = tpcb-like ] && flag=
    for proto in simple extended prepared; do
      local t
      t=$(su postgres -c "pgbench $flag -M $proto -c $CLIENTS -j $CLIENTS -T $SECS $db" 2>/dev/null | tps)
      say "pgbench_${script}_${proto}_tps $t tx/s"
    done
  done
  # Per statement: 1/tps × clients is a transaction's time; the prepared
  # saving of select-only is one parse and one plan of a point query.
  say "note: parse+plan (ns) = (1/tps_simple - 1/tps_prepared) * cores * 1e9 on the select-only lines, when the machine's $(nproc) cores are busy (pgbench runs on them too)"
}

mysql() {
  local opts=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=100000 --threads=$CLIENTS --time=$SECS)
  mariadb -e 'CREATE DATABASE IF NOT EXISTS sbtest' 2>/dev/null || mysql -e 'CREATE DATABASE IF NOT EXISTS sbtest'
  sysbench oltp_point_select "${opts[@]}" cleanup >/dev/null 2>&1
  sysbench oltp_point_select "${opts[@]}" prepare >/dev/null 2>&1
  for mode in disable auto; do
    local q
    q=$(sysbench oltp_point_select "${opts[@]}" --db-ps-mode=$mode run 2>/dev/null | sed -n 's/.*queries: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p')
    say "sysbench_point_select_ps_${mode}_qps $q q/s"
  done
}

pingpong() {
  # A loopback round trip of 64-byte messages, and a read split in two
  # (the 4-byte prefix, then the payload) against a read of the whole.
  python3 - <<'PY' | tee -a "$OUT"
import socket, threading, time
N = 20000
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(1)
port = srv.getsockname()[1]
def echo():
    c, _ = srv.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        b = c.recv(4096)
        if not b: return
        c.sendall(b)
threading.Thread(target=echo, daemon=True).start()
s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
msg = b"x" * 64
def rt(split):
    t = time.perf_counter_ns()
    for _ in range(N):
        s.sendall(msg)
        if split:
            h = s.recv(4, socket.MSG_WAITALL); s.recv(60, socket.MSG_WAITALL)
        else:
            s.recv(64, socket.MSG_WAITALL)
    return (time.perf_counter_ns() - t) / N
one, two = rt(False), rt(True)
print(f"loopback_round_trip_ns {one:.0f} ns")
print(f"split_read_extra_ns {two-one:.0f} ns (one more read system call a message, as Connector/J's length prefix)")
PY
}

for s in "${steps[@]}"; do
  case $s in
    setup|pg|mysql|pingpong) say "== $s $(date -u +%FT%TZ)"; $s ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
  esac
done
