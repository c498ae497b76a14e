#!/usr/bin/env bash
# Calibration of the client and server cost layer (package sim/client) on
# real servers. Not part of go test: it installs servers and takes about
# fifteen minutes.
#
# Usage (as root, on the machine whose figures the defaults should be):
#   sim/client/calibrate/run.sh [setup] [pg] [mysql] [java] [pingpong] [stop]
#   (no step: pg mysql java pingpong fit)
#
#   setup    : installs PostgreSQL, MariaDB, sysbench and the two JDBC
#              drivers from Debian's packages (postgresql mariadb-server
#              sysbench libpostgresql-jdbc-java libmariadb-java), then
#              starts both servers (a container's policy-rc.d keeps the
#              packages from starting them) and makes a login "calib"
#              (password calib) on each, over loopback TCP
#   pg       : pgbench, select-only with --protocol simple, extended and
#              prepared (the last twice: PostgreSQL's generic plan, and
#              plan_cache_mode=force_custom_plan), a 100-row range against
#              its count, and TPC-B-like in each protocol; the backends'
#              CPU a statement from /proc, planning and execution times
#              from pg_stat_statements (track_planning on)
#   mysql    : sysbench oltp_point_select with --db-ps-mode=disable and
#              auto (text against server-side prepared statements, which
#              MariaDB plans at each execution), and oltp_read_only's
#              100-row range against its SUM; mariadbd's CPU a query
#   java     : Calib.java (compiled here with javac) times the JDBC
#              drivers' own CPU against both servers: pgjdbc and MariaDB
#              Connector/J, a 1-row and a 100-row SELECT
#   pingpong : a loopback TCP round trip (the network model's RoundTrip
#              for a client on the server's machine) and the cost of one
#              more small read system call
#   fit      : the prices client.DefaultParams takes, from the figures
#              already in $OUT (no measurement; run it after the others)
#   stop     : stops both servers
#
# pgbench and sysbench are C clients (libpq, libmysqlclient): they read a
# response with one system call into a buffer, cost no JDBC driver work
# and do not make the extra read per packet of Connector/J's path (its
# 4-byte length prefix, then the payload). The pingpong step measures that
# per-message read separately, and the java step the drivers' work.
#
# Settings (environment): CLIENTS connections (default 1: the servers'
# own timers, pg_stat_statements', are wall-clock, and one connection
# keeps our own processes from queueing for the cores inside them), SECS
# a run's measured window (10), SCALE pgbench's scale (10), REPS (3), ROWS
# the range's rows (100), OUT. The java step reads the tables the pg and
# mysql steps load.
#
# Every measurement runs $REPS times (default 3) and the best run is kept:
# the one that did the most work a second (transactions, queries or round
# trips). The machine may be shared: each figure carries the load
# average (/proc/loadavg) at the end of its best run. CPU a statement
# counts only the server's processes (or the client's thread), so another
# tenant's load slows a run without adding to its figure, except through
# the caches.
#
# Output: one "name value unit ..." line per figure on standard output
# and in $OUT (default sim/client/calibrate/results-<date>.txt), each
# run as a "#" line above its best. client.DefaultParams takes its prices
# from these lines; DefaultParamSources names each line and the formula.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE/results-$(date +%Y%m%d).txt}
CLIENTS=${CLIENTS:-1}
SECS=${SECS:-10}
SCALE=${SCALE:-10}
REPS=${REPS:-3}
ROWS=${ROWS:-100}
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(pg mysql java pingpong fit)

say() { echo "$@" | tee -a "$OUT"; }
load() { cut -d' ' -f1-3 /proc/loadavg | tr ' ' ','; }
# cpu_ticks PID...: each process's user+system CPU so far, "pid:ticks"
# (/proc/PID/stat fields 14 and 15; a process gone is left out).
# cpu_delta A B: the nanoseconds between two cpu_ticks samples, over the
# processes in both (one that exits between them would count negative).
TICK_NS=$((1000000000 / $(getconf CLK_TCK)))
cpu_ticks() {
  local p v
  for p in "$@"; do
    v=$(sed 's/^.*) //' /proc/$p/stat 2>/dev/null | awk '{print $12 + $13}')
    [ -n "$v" ] && printf '%s:%s ' "$p" "$v"
  done
  echo
}
cpu_delta() {
  awk -v a="$1" -v b="$2" -v t="$TICK_NS" 'BEGIN {
    n = split(a, x, " "); for (i = 1; i <= n; i++) { split(x[i], f, ":"); t0[f[1]] = f[2] }
    n = split(b, y, " "); for (i = 1; i <= n; i++) { split(y[i], f, ":"); if (f[1] in t0) s += f[2] - t0[f[1]] }
    printf "%.0f", s * t }'
}
calc() { awk "BEGIN { printf \"%.0f\", $1 }"; }

setup() {
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql postgresql-contrib mariadb-server mariadb-client sysbench \
    libpostgresql-jdbc-java libmariadb-java default-jdk-headless || return 1
  start
  # PostgreSQL: a password login over loopback TCP (Debian's pg_hba asks
  # for scram-sha-256 on 127.0.0.1), pg_stat_statements with planning.
  runuser -u postgres -- psql -X -q <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'calib') THEN CREATE ROLE calib LOGIN PASSWORD 'calib'; END IF;
END $$;
ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements';
SQL
  pg_ctlcluster "$(pgver)" main restart
  # The library's parameters exist once it is loaded.
  runuser -u postgres -- psql -X -q -c 'ALTER SYSTEM SET pg_stat_statements.track_planning = on' -c 'SELECT pg_reload_conf()' >/dev/null
  # MariaDB: Debian's root logs in by unix socket only; sysbench and the
  # JDBC driver come over TCP.
  mariadb -e "CREATE USER IF NOT EXISTS 'calib'@'127.0.0.1' IDENTIFIED BY 'calib';
    CREATE USER IF NOT EXISTS 'calib'@'localhost' IDENTIFIED BY 'calib';
    GRANT ALL ON *.* TO 'calib'@'127.0.0.1'; GRANT ALL ON *.* TO 'calib'@'localhost';"
}

pgver() { pg_lsclusters -h | awk '$2 == "main" { print $1; exit }'; }

start() {
  local v
  v=$(pgver)
  pg_lsclusters -h | awk '$2 == "main" { print $4 }' | grep -q online || pg_ctlcluster "$v" main start
  if ! mariadb-admin ping >/dev/null 2>&1; then
    service mariadb start || { (mysqld_safe >/dev/null 2>&1 &) ; sleep 5; }
  fi
  mariadb-admin ping
  pg_lsclusters
}

stop() {
  pg_ctlcluster "$(pgver)" main stop
  service mariadb stop || mariadb-admin shutdown
}

versions() {
  say "# host: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), kernel $(uname -r), $(free -m | awk '/^Mem/ {print $2}') MiB"
  say "# $(pgbench --version 2>&1); $(runuser -u postgres -- psql -XAtc 'select version()' 2>&1 | cut -d, -f1)"
  say "# $(mariadb --version 2>&1); sysbench $(sysbench --version 2>&1)"
  say "# $(java -version 2>&1 | head -1); pgjdbc $(dpkg-query -W -f '${Version}' libpostgresql-jdbc-java 2>/dev/null); MariaDB Connector/J $(dpkg-query -W -f '${Version}' libmariadb-java 2>/dev/null)"
}

# ---- PostgreSQL ----

export PGPASSWORD=calib
PGB=(-h 127.0.0.1 -U calib)
padmin() { runuser -u postgres -- psql -X -At -d calib -c "$1"; }
# pgss: the calib role's statements in pg_stat_statements so far (a
# TPC-B-like transaction's BEGIN and END among them): calls, plans,
# planning ms, execution ms.
pgss() {
  padmin "SELECT coalesce(sum(calls),0), coalesce(sum(plans),0), coalesce(sum(total_plan_time),0), coalesce(sum(total_exec_time),0)
    FROM pg_stat_statements WHERE userid = 'calib'::regrole"
}

# pgrun NAME PGOPTIONS PGBENCH-ARGS...: $REPS runs of pgbench; for each, a
# window of $SECS seconds inside the run in which the backends' CPU and
# pg_stat_statements' counters are read at both ends. Keeps the run with
# the most transactions a second.
pgrun() {
  local name=$1 opts=$2
  shift 2
  local best_tps=0 best=""
  for rep in $(seq "$REPS"); do
    local tmp pid pids c0 s0 b0 c1 s1 b1 l tps
    tmp=$(mktemp)
    PGOPTIONS=$opts pgbench "${PGB[@]}" "$@" -c "$CLIENTS" -j "$CLIENTS" -T $((SECS + 3)) calib >"$tmp" 2>&1 &
    pid=$!
    sleep 1.5
    pids=$(padmin "SELECT pid FROM pg_stat_activity WHERE usename = 'calib' AND application_name = 'pgbench'")
    c0=$(cpu_ticks $pids); b0=$(cpu_ticks $pid); s0=$(pgss)
    sleep "$SECS"
    c1=$(cpu_ticks $pids); b1=$(cpu_ticks $pid); s1=$(pgss)
    l=$(load)
    wait $pid
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$tmp" | head -1)
    rm -f "$tmp"
    local line
    line=$(awk -v a="$s0" -v b="$s1" -v c="$(cpu_delta "$c0" "$c1")" -v p="$(cpu_delta "$b0" "$b1")" -v tps="$tps" -v l="$l" -v n="$name" 'BEGIN {
      split(a, x, "|"); split(b, y, "|"); calls = y[1] - x[1]; plans = y[2] - x[2]
      if (calls <= 0) { print "# " n " no statements counted"; exit }
      printf "%s tps %.0f stmts %d server_cpu_ns_per_stmt %.0f pgbench_cpu_ns_per_stmt %.0f plan_ns_per_stmt %.0f plans_per_stmt %.3f exec_ns_per_stmt %.0f load %s",
        n, tps, calls, c / calls, p / calls, (y[3] - x[3]) * 1e6 / calls, plans / calls, (y[4] - x[4]) * 1e6 / calls, l }')
    say "#  run $rep: $line"
    if awk -v a="${tps:-0}" -v b="$best_tps" 'BEGIN { exit !(a > b) }'; then best_tps=$tps; best=$line; fi
  done
  say "$best (best of $REPS by tx/s)"
}

# fig NAME RATE FIELD: a field of the best line of NAME printed so far
# (RATE: tps for pgbench's lines, qps for sysbench's).
fig() { grep "^$1 $2 " "$OUT" | tail -1 | awk -v f="$3" '{ for (i = 2; i < NF; i++) if ($i == f) { print $(i + 1); exit } }'; }
pgfig() { fig "$1" tps "$2"; }

# pgstages: PostgreSQL's own per-stage CPU: log_parser_stats and
# log_planner_stats log getrusage's user and system time of each
# statement's raw parse, parse analysis, rewrite and planning; a simple
# protocol select-only pgbench run, the log read back from where it
# stood. $REPS runs, the best by tx/s.
pgstages() {
  local log best_tps=0 best=""
  log=/var/log/postgresql/postgresql-$(pgver)-main.log
  runuser -u postgres -- psql -X -q -c 'ALTER ROLE calib SET log_parser_stats = on' -c 'ALTER ROLE calib SET log_planner_stats = on'
  for rep in $(seq "$REPS"); do
    local from tps line
    from=$(stat -c %s "$log")
    tps=$(pgbench "${PGB[@]}" -S -M simple -c 1 -j 1 -T "$SECS" calib 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
    line=$(tail -c +$((from + 1)) "$log" | awk -v tps="$tps" -v l="$(load)" '
      /LOG:  PARSER STATISTICS/ { st = "raw_parse" } /LOG:  PARSE ANALYSIS STATISTICS/ { st = "analysis" }
      /LOG:  REWRITER STATISTICS/ { st = "rewrite" } /LOG:  PLANNER STATISTICS/ { st = "plan" }
      / s user, .* s system, .* s elapsed/ && st != "" {
        for (i = 1; i <= NF; i++) { if ($i == "user,") u = $(i - 2); if ($i == "system,") y = $(i - 2) }
        sum[st] += (u + y) * 1e9; n[st]++; st = "" }
      END { printf "pg_stages tps %.0f stmts %d raw_parse_ns %.0f analysis_ns %.0f rewrite_ns %.0f plan_ns %.0f load %s",
        tps, n["plan"], sum["raw_parse"] / n["raw_parse"], sum["analysis"] / n["analysis"], sum["rewrite"] / n["rewrite"], sum["plan"] / n["plan"], l }')
    say "#  run $rep: $line"
    if awk -v a="${tps:-0}" -v b="$best_tps" 'BEGIN { exit !(a > b) }'; then best_tps=$tps; best=$line; fi
  done
  runuser -u postgres -- psql -X -q -c 'ALTER ROLE calib RESET log_parser_stats' -c 'ALTER ROLE calib RESET log_planner_stats'
  say "$best (best of $REPS by tx/s; getrusage user+system a statement, the simple protocol, 1 client)"
}

pg() {
  start >/dev/null
  versions
  runuser -u postgres -- psql -X -q -c 'DROP DATABASE IF EXISTS calib' -c 'CREATE DATABASE calib OWNER calib'
  padmin 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null
  [ "$(padmin 'SHOW pg_stat_statements.track_planning')" = on ] || { echo "pg_stat_statements.track_planning is off: run setup" >&2; return 1; }
  pgbench "${PGB[@]}" -i -q -s "$SCALE" calib >/dev/null 2>&1
  padmin 'VACUUM ANALYZE' >/dev/null
  local range count
  range=$(mktemp --suffix=.sql); count=$(mktemp --suffix=.sql)
  chmod 644 "$range" "$count"
  printf '\\set aid random(1, 100000 * :scale - %d)\nSELECT aid, bid, abalance, filler FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid + %d;\n' "$ROWS" $((ROWS - 1)) >"$range"
  printf '\\set aid random(1, 100000 * :scale - %d)\nSELECT count(filler) FROM (SELECT aid, bid, abalance, filler FROM pgbench_accounts WHERE aid BETWEEN :aid AND :aid + %d) r;\n' "$ROWS" $((ROWS - 1)) >"$count"
  say "== pg $(date -u +%FT%TZ): pgbench scale $SCALE, $CLIENTS clients over loopback TCP, ${SECS} s windows, $REPS runs each"
  say "# fields: tx/s; statements in the window; CPU a statement of the server's backends and of pgbench (from /proc); pg_stat_statements' planning time (track_planning) and execution time a statement"
  pgstages
  pgrun pg_select_simple "" -S -M simple
  pgrun pg_select_extended "" -S -M extended
  pgrun pg_select_prepared "" -S -M prepared
  pgrun pg_select_prepared_custom "-c plan_cache_mode=force_custom_plan" -S -M prepared
  # A generic plan for both: PostgreSQL would otherwise plan each range
  # execution (its generic cost is the higher), and the count's plan costs
  # more than the range's.
  pgrun pg_range${ROWS}_prepared "-c plan_cache_mode=force_generic_plan" -f "$range" -M prepared
  pgrun pg_count${ROWS}_prepared "-c plan_cache_mode=force_generic_plan" -f "$count" -M prepared
  for proto in simple extended prepared; do
    pgrun pg_tpcb_$proto "" -M $proto
  done
  rm -f "$range" "$count"

  local simple ext prep cust plan_c exec_p rng cnt
  simple=$(pgfig pg_select_simple server_cpu_ns_per_stmt); ext=$(pgfig pg_select_extended server_cpu_ns_per_stmt)
  prep=$(pgfig pg_select_prepared server_cpu_ns_per_stmt); cust=$(pgfig pg_select_prepared_custom server_cpu_ns_per_stmt)
  plan_c=$(pgfig pg_select_prepared_custom plan_ns_per_stmt); exec_p=$(pgfig pg_select_prepared exec_ns_per_stmt)
  rng=$(pgfig pg_range${ROWS}_prepared server_cpu_ns_per_stmt); cnt=$(pgfig pg_count${ROWS}_prepared server_cpu_ns_per_stmt)
  say "# derived (PostgreSQL; the backends' CPU a statement, from /proc, of the best runs above; a point SELECT of pgbench_accounts by its primary key)."
  say "# pg_stat_statements' and the stage statistics' times are not used in them: the first are wall-clock (a backend descheduled counts), the"
  say "# second are inflated by the logging between stages (tx/s falls about fourfold); they are above for the split's order of magnitude."
  say "pg_parse_plan_ns $(calc "$simple - $prep") ns (simple minus prepared: a parse and a plan less a generic plan's reuse)"
  say "pg_plan_minus_hit_ns $(calc "$cust - $prep") ns (prepared with force_custom_plan minus prepared: a plan less a generic plan's reuse)"
  say "pg_simple_minus_custom_ns $(calc "$simple - $cust") ns (simple minus prepared with force_custom_plan: a parse, less what the plan cache's custom path adds to a plan (it copies and checks the query), so not the parse)"
  say "pg_parse_extended_ns $(calc "$ext - $cust") ns (extended minus prepared with force_custom_plan: the unnamed statement's Parse and Describe, as pgjdbc sends them)"
  say "pg_prepared_stmt_ns $(calc "$prep") ns (a prepared point SELECT's whole backend CPU: statement work, the plan's reuse, execution ($(calc "$exec_p") ns wall by pg_stat_statements), its reads and sends)"
  say "pg_row_ns $(calc "($rng - $cnt) / ($ROWS - 1)") ns (($ROWS rows sent minus their count sent) / $((ROWS - 1)): a 4-column row of about 100 bytes encoded and sent, less count()'s step)"
  say "note: pgbench is a C client (libpq): one read a response, no driver work beyond pgbench_cpu_ns_per_stmt"
}

# ---- MariaDB ----

SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=calib --mysql-password=calib --mysql-db=sbtest --tables=1 --table-size=100000 --rand-type=uniform)
mysqld_pid() { pidof mariadbd || pidof mysqld; }

# sbrun NAME TEST ARGS...: $REPS sysbench runs; mariadbd's CPU over each
# (the process: every thread) divided by its queries. Keeps the run with
# the most queries a second.
sbrun() {
  local name=$1 test=$2
  shift 2
  local best_q=0 best=""
  for rep in $(seq "$REPS"); do
    local pid c0 c1 out q n l line
    pid=$(mysqld_pid)
    c0=$(cpu_ticks $pid)
    out=$(sysbench "$test" "${SB[@]}" --threads="$CLIENTS" --time="$SECS" "$@" run 2>&1)
    c1=$(cpu_ticks $pid)
    l=$(load)
    n=$(echo "$out" | sed -n 's/^ *total: *\([0-9]*\)$/\1/p' | head -1)
    q=$(echo "$out" | sed -n 's/.*queries: *[0-9]* *(\([0-9.]*\) per sec.*/\1/p' | head -1)
    if [ -z "$n" ] || [ "$n" = 0 ]; then
      say "#  run $rep: $name failed: $(echo "$out" | grep -i -m1 fatal)"
      continue
    fi
    line=$(awk -v n="$name" -v q="$q" -v t="$n" -v c="$(cpu_delta "$c0" "$c1")" -v l="$l" 'BEGIN {
      printf "%s qps %.0f queries %d server_cpu_ns_per_query %.0f load %s", n, q, t, c / t, l }')
    say "#  run $rep: $line"
    if awk -v a="${q:-0}" -v b="$best_q" 'BEGIN { exit !(a > b) }'; then best_q=$q; best=$line; fi
  done
  say "$best (best of $REPS by queries/s)"
}

sbfig() { fig "$1" qps "$2"; }

mysql() {
  start >/dev/null
  versions
  mariadb -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
  sysbench oltp_point_select "${SB[@]}" prepare >/dev/null 2>&1 || { echo "sysbench prepare failed" >&2; return 1; }
  say "== mysql $(date -u +%FT%TZ): sysbench, 1 table of 100,000 rows, $CLIENTS threads over loopback TCP, ${SECS} s, $REPS runs each"
  say "# fields: queries/s; queries; mariadbd's CPU a query (from /proc)"
  local ro=(--skip_trx=on --point_selects=0 --simple_ranges=0 --sum_ranges=0 --order_ranges=0 --distinct_ranges=0 --range_size="$ROWS")
  for mode in disable auto; do
    sbrun my_point_select_ps_$mode oltp_point_select --db-ps-mode=$mode
  done
  # oltp_read_only's simple range: SELECT c FROM sbtest1 WHERE id BETWEEN
  # ? AND ? (c is CHAR(120)); its sum range: SELECT SUM(k) over the same.
  sbrun my_range${ROWS}_ps_auto oltp_read_only --db-ps-mode=auto "${ro[@]}" --simple_ranges=1
  sbrun my_sum${ROWS}_ps_auto oltp_read_only --db-ps-mode=auto "${ro[@]}" --sum_ranges=1
  local d a r s
  d=$(sbfig my_point_select_ps_disable server_cpu_ns_per_query); a=$(sbfig my_point_select_ps_auto server_cpu_ns_per_query)
  r=$(sbfig my_range${ROWS}_ps_auto server_cpu_ns_per_query); s=$(sbfig my_sum${ROWS}_ps_auto server_cpu_ns_per_query)
  say "# derived (MariaDB, server CPU in ns):"
  say "my_text_minus_prepared_ns $(calc "$d - $a") ns (text minus server-side prepared: MariaDB plans every execution of a prepared statement, so this is the parse a prepared statement saves less what its execution costs more (the binary protocol, the statement's re-initialization); negative: prepared costs more)"
  say "my_prepared_stmt_ns $(calc "$a") ns (a prepared point SELECT's whole mariadbd CPU: statement work, plan, execution, reads and sends)"
  say "my_row_ns $(calc "($r - $s) / ($ROWS - 1)") ns (($ROWS rows of a CHAR(120) sent minus their SUM sent) / $((ROWS - 1)))"
  say "note: sysbench is a C client (libmariadb): one read a response, no driver work"
}

# ---- JDBC drivers ----

java_() {
  start >/dev/null
  local pgjar myjar tmp
  pgjar=$(ls /usr/share/java/postgresql.jar 2>/dev/null); myjar=$(ls /usr/share/java/mariadb-java-client.jar 2>/dev/null)
  [ -n "$pgjar" ] && [ -n "$myjar" ] || { echo "JDBC drivers missing: run setup" >&2; return 1; }
  tmp=$(mktemp -d)
  javac -d "$tmp" "$HERE/Calib.java" || return 1
  say "== java $(date -u +%FT%TZ): the driver's thread CPU a statement (ThreadMXBean: user = the driver's work, system = its system calls), 1 thread, autocommit, $REPS runs each"
  versions
  say "# fields: statements/s (wall); user CPU ns a statement; system CPU ns a statement"
  local cp="$tmp:$pgjar:$myjar"
  for q in point range; do
    java -cp "$cp" Calib "jdbc:postgresql://127.0.0.1:5432/calib?user=calib&password=calib" pgjdbc $q "$REPS" "$ROWS" $((SCALE * 100000)) | tee -a "$OUT"
  done
  for q in point range; do
    java -cp "$cp" Calib "jdbc:mariadb://127.0.0.1:3306/sbtest?user=calib&password=calib" mariadb $q "$REPS" "$ROWS" 100000 | tee -a "$OUT"
  done
  rm -rf "$tmp"
  local d
  for d in pgjdbc mariadb; do
    local p r
    p=$(grep "^java_${d}_point " "$OUT" | tail -1 | awk '{print $5}'); r=$(grep "^java_${d}_range${ROWS} " "$OUT" | tail -1 | awk '{print $5}')
    say "java_${d}_statement_ns $(calc "$p") ns (user CPU of a 1-row point SELECT's execution, its row read)"
    say "java_${d}_row_ns $(calc "($r - $p) / ($ROWS - 1)") ns ((user CPU of a $ROWS-row SELECT minus a 1-row one) / $((ROWS - 1)), each column read with getInt/getString)"
  done
}

# ---- the loopback round trip and a read ----

pingpong() {
  say "== pingpong $(date -u +%FT%TZ): 64-byte messages on loopback TCP (TCP_NODELAY), Python's socket module, the echo server a process of its own, $REPS runs each"
  # A loopback round trip of 64-byte messages. Then the cost of one more
  # read system call a message: messages already in the socket's buffer
  # read with two recv calls each (the 4-byte prefix, then the payload)
  # against one (no waiting in either, so no round trip in the figure).
  REPS=$REPS python3 - <<'PY' | tee -a "$OUT"
import os, socket, time
N, REPS, MSG = 20000, int(os.environ["REPS"]), 64
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(1)
port = srv.getsockname()[1]
if os.fork() == 0:
    c, _ = srv.accept(); c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        b = c.recv(1 << 16)
        if not b: os._exit(0)
        c.sendall(b)
s = socket.create_connection(("127.0.0.1", port)); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
msg = b"x" * MSG
def rt():
    t = time.perf_counter_ns()
    for _ in range(N):
        s.sendall(msg)
        s.recv(MSG, socket.MSG_WAITALL)
    return (time.perf_counter_ns() - t) / N
def reads(split, k=512):
    # k messages echoed at once, then read from the buffer.
    total = 0
    for _ in range(N // k):
        s.sendall(msg * k)
        got = 0
        while got < k * MSG:  # wait until all of it is back
            got = len(s.recv(k * MSG, socket.MSG_PEEK | socket.MSG_WAITALL))
        t = time.perf_counter_ns()
        for _ in range(k):
            if split:
                s.recv(4); s.recv(MSG - 4)
            else:
                s.recv(MSG)
        total += time.perf_counter_ns() - t
    return total / (N // k * k)
def load():
    return ",".join(open("/proc/loadavg").read().split()[:3])
best_rt, best_rd = None, None
for r in range(REPS):
    one = rt()
    whole, split = reads(False), reads(True)
    print(f"#  run {r+1}: round_trip_ns {one:.0f} read_ns {whole:.0f} split_read_ns {split:.0f} load {load()}")
    if best_rt is None or one < best_rt[0]:
        best_rt = (one, load())
    if best_rd is None or split < best_rd[1]:
        best_rd = (whole, split, load())
print(f"loopback_round_trip_ns {best_rt[0]:.0f} ns (load {best_rt[1]}; best of {REPS} by round trips/s)")
print(f"split_read_extra_ns {best_rd[1]-best_rd[0]:.0f} ns (one more read system call a message, as Connector/J's length prefix: {best_rd[1]:.0f} ns a message read in two, {best_rd[0]:.0f} in one; load {best_rd[2]}; best of {REPS} by messages/s)")
s.close()
PY
}

# ---- the prices ----

# fit: client.DefaultParams' prices from the figures in $OUT (the last
# line of each name), as "fit_<price>_ns" lines; DefaultParamSources
# cites them. Parse and plan together are the simple protocol's saving
# with -M prepared plus the generic plan's reuse (an estimate: only their
# difference is measured), split by PostgreSQL's stage statistics. The
# point lookup's own work is enginelab's price of it (hw's default CPU
# profile: 3 node visits, a heap fetch, a row examined, decoded and
# returned), taken out of the statement's.
fit() {
  say "== fit $(date -u +%FT%TZ): client.DefaultParams from the lines above, rounded to 10 ns"
  OUT=$OUT PLAN_CACHE_HIT=${PLAN_CACHE_HIT:-1000} LOOKUP=${LOOKUP:-1250} python3 - <<'PY' | tee -a "$OUT"
import os, re
last, fields = {}, {}
for line in open(os.environ["OUT"]):
    f = line.split()
    if not f or f[0].startswith(("#", "==")) or len(f) < 2:
        continue
    if re.fullmatch(r"-?[0-9.]+", f[1]):
        last[f[0]] = float(f[1])
    fields[f[0]] = {f[i]: float(f[i + 1]) for i in range(1, len(f) - 1) if re.fullmatch(r"-?[0-9.]+", f[i + 1])}
hit, lookup = float(os.environ["PLAN_CACHE_HIT"]), float(os.environ["LOOKUP"])
st = fields["pg_stages"]
front = st["raw_parse_ns"] + st["analysis_ns"] + st["rewrite_ns"]
share = front / (front + st["plan_ns"])
both = last["pg_parse_plan_ns"] + hit
sysc = last["split_read_extra_ns"]
drow = (last["java_pgjdbc_row_ns"] + last["java_mariadb_row_ns"]) / 2
r = lambda x: round(x / 10) * 10
out = [
    ("parse", share * both, f"(pg_parse_plan_ns + plan_cache_hit {hit:.0f}) x {share:.3f}, the parse's share of pg_stages (raw parse, analysis, rewrite against plan)"),
    ("plan", (1 - share) * both, f"(pg_parse_plan_ns + plan_cache_hit {hit:.0f}) x {1 - share:.3f}"),
    ("plan_cache_hit", hit, "an estimate (PLAN_CACHE_HIT): the measurements give only plan less it"),
    ("statement", last["pg_prepared_stmt_ns"] - hit - 2 * sysc - lookup,
     f"pg_prepared_stmt_ns - plan_cache_hit - 2 x split_read_extra_ns - the engine's point lookup {lookup:.0f} (LOOKUP)"),
    ("row", last["pg_row_ns"], "pg_row_ns"),
    ("syscall", sysc, "split_read_extra_ns"),
    ("driver_statement", (last["java_pgjdbc_statement_ns"] + last["java_mariadb_statement_ns"]) / 2 - drow,
     "(java_pgjdbc_statement_ns + java_mariadb_statement_ns) / 2 - driver_row"),
    ("driver_row", drow, "(java_pgjdbc_row_ns + java_mariadb_row_ns) / 2"),
    ("client_syscall", sysc, "split_read_extra_ns"),
]
for name, v, how in out:
    print(f"fit_{name}_ns {r(v):.0f} ns ({how}: {v:.1f})")
PY
}

for s in "${steps[@]}"; do
  case $s in
    setup | stop | fit) $s ;;
    pg | mysql | pingpong) $s ;;
    java) java_ ;;
    *) echo "unknown step $s" >&2; exit 2 ;;
  esac
done
