#!/usr/bin/env bash
# bench/run.sh [--short]: the flash-sale benchmark (BENCHMARKS.md), end to end.
#
# Builds couponsvc and couponbench, starts couponsvc on MariaDB and Redis (a
# fresh database, loopback only), runs `couponbench -scenario all` with its
# references (baseline, limit, rawredeem) in the same run, samples the
# service's RSS from /proc, reports Redis memory per claimed coupon, stops the
# service, and (without --short) rewrites BENCHMARKS.md above its notes marker.
# --short is the CI version: every count divided by 50, a couple of minutes.
# Exits non-zero when couponbench does (a broken guarantee) or the service
# cannot be started.
#
# Taken alone: the run refuses to start (exit 3) when the 1-minute load
# average is above 1, since other work on the cores would be measured too;
# --short (CI's smoke, on a busy machine) and BENCH_NOT_ALONE=1 run anyway,
# marked "not alone, not for BENCHMARKS.md", and never rewrite BENCHMARKS.md.
# After the full run, the measures of the targets are taken again in
# BENCH_ROUNDS rounds (3), each scenario right after or before its reference
# (claim, baseline, flash, redis-benchmark of the bare claim script, checkout,
# raworderlines, redeem, raworder, cartcheckout), and the last table printed
# is each measure's median and spread (min–max) over the rounds
# (couponbench summarize; $OUT/alone/round-N/ keeps each round's reports).
#
# Settings (environment, all optional):
#   BENCH_MYSQL_HOST/PORT/USER  MariaDB (127.0.0.1 / 3306 / root, no password)
#   BENCH_DB                    database to recreate (couponbench_run)
#   BENCH_REDIS_ADDR            Redis (127.0.0.1:6379); never flushed
#   BENCH_REDIS_PREFIX          the service's key prefix (couponbench:<BENCH_DB>:)
#   BENCH_PORT                  couponsvc's loopback port (18080); its pprof
#                               listener (COUPON_PPROF_LISTEN) gets BENCH_PORT+1
#   BENCH_CONCURRENCY           requests in flight (256)
#   BENCH_OUT                   results folder (bench-results)
#   BENCH_KEEP_DB=1             keep the database after the run, to look into it
#   BENCH_SCENARIO              couponbench -scenario (all); anything but all
#                               leaves BENCHMARKS.md alone: for profiling one path
#   BENCH_OPEN_LOOP             after claim and flash, run each again open loop
#                               at this fraction of its measured answers/s
#                               (0.5; 0 turns it off): claim-open, flash-open
#   BENCH_ARGS                  more couponbench flags (e.g. "-divide 5" for a
#                               reduced run, which leaves BENCHMARKS.md alone)
#   BENCH_SERVICE_BIN           a couponsvc binary to run instead of building
#                               one (to compare against an earlier commit)
#   BENCH_WEBHOOK=1             also run claim and redeem with a webhook endpoint
#                               (couponbench's own receiver) and report the ratio
#   BENCH_DB_MAX_OPEN           couponsvc's MySQL pool (COUPON_DB_MAX_OPEN;
#                               unset: the service's default, 64)
#   BENCH_PROFILE_SELF=1        also profile couponbench itself
#                               ($OUT/couponbench.cpu.pprof)
#   BENCH_NOT_ALONE=1           run even when the load average is above 1,
#                               marked not alone (--short always runs so)
#   BENCH_ROUNDS                rounds of the measures taken alone (3; 0: none)
set -euo pipefail

cd "$(dirname "$0")/.."
SHORT=0
case "${1:-}" in
--short) SHORT=1 ;;
"") ;;
*) echo "usage: bench/run.sh [--short]" >&2; exit 2 ;;
esac

# The figures are ratios to references taken in the same run, but on two
# shared cores another job's load still moves them apart: a run counts only
# when nothing else runs.
LOAD1=$(cut -d' ' -f1 /proc/loadavg)
ALONE=1
if awk -v l="$LOAD1" 'BEGIN { exit !(l > 1) }'; then
	if [ "$SHORT" = 1 ] || [ "${BENCH_NOT_ALONE:-0}" = 1 ]; then
		ALONE=0
		echo "== load average $LOAD1 (> 1): this run is not alone, not for BENCHMARKS.md"
	else
		echo "bench/run.sh: the 1-minute load average is $LOAD1 (> 1): other work would be measured too." >&2
		echo "Run it on a quiet machine, or set BENCH_NOT_ALONE=1 for a run marked not alone." >&2
		exit 3
	fi
fi
ROUNDS=${BENCH_ROUNDS:-3}
case "$ROUNDS" in
*[!0-9]* | "") echo "bench/run.sh: BENCH_ROUNDS must be a whole number" >&2; exit 2 ;;
esac

MYSQL_HOST=${BENCH_MYSQL_HOST:-127.0.0.1}
MYSQL_PORT=${BENCH_MYSQL_PORT:-3306}
MYSQL_USER=${BENCH_MYSQL_USER:-root}
DB=${BENCH_DB:-couponbench_run}
REDIS_ADDR=${BENCH_REDIS_ADDR:-127.0.0.1:6379}
PORT=${BENCH_PORT:-18080}
CONC=${BENCH_CONCURRENCY:-256}
OUT=${BENCH_OUT:-bench-results}
SCENARIO=${BENCH_SCENARIO:-all}
REDIS_HOST=${REDIS_ADDR%:*}
REDIS_PORT=${REDIS_ADDR##*:}
# The service's Redis keys go under a prefix of their own
# (COUPON_REDIS_PREFIX), deleted before and after the run: the fresh database
# starts its campaign ids at 1 again and must not meet an earlier run's counters.
KEY_PREFIX=${BENCH_REDIS_PREFIX:-couponbench:${DB}:}

for host in "$MYSQL_HOST" "$REDIS_HOST"; do
	case "$host" in
	127.* | localhost | ::1) ;;
	*) echo "bench/run.sh: $host is not a loopback address" >&2; exit 2 ;;
	esac
done
case "$DB" in
*[!A-Za-z0-9_]* | "") echo "bench/run.sh: BENCH_DB must be [A-Za-z0-9_]+" >&2; exit 2 ;;
esac

mysqlq() { mysql -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u "$MYSQL_USER" -N -B "$@"; }
rcli() { redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" "$@"; }

# forget_keys deletes every key under KEY_PREFIX. Bounded: SCAN stops when its
# cursor comes back to 0, and at most 10,000 batches of 500.
forget_keys() {
	rcli --scan --pattern "${KEY_PREFIX}*" | head -n 5000000 |
		xargs -r -n 500 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" UNLINK >/dev/null || true
}

mkdir -p "$OUT"
export GOFLAGS=${GOFLAGS:--buildvcs=false}
echo "== build"
if [ -n "${BENCH_SERVICE_BIN:-}" ]; then
	cp "$BENCH_SERVICE_BIN" "$OUT/couponsvc"
else
	go build -o "$OUT/couponsvc" ./cmd/couponsvc
fi
go build -o "$OUT/couponbench" ./cmd/couponbench

echo "== database $DB (recreated), Redis $REDIS_ADDR (not flushed)"
forget_keys
mysqlq -e "DROP DATABASE IF EXISTS \`$DB\`; CREATE DATABASE \`$DB\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"

TOKEN="bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
SVC_PID=""
stop_service() {
	[ -n "$SVC_PID" ] || return 0
	if kill -0 "$SVC_PID" 2>/dev/null; then
		kill -TERM "$SVC_PID" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "$SVC_PID" 2>/dev/null || break
			sleep 0.2
		done
		kill -0 "$SVC_PID" 2>/dev/null && kill -KILL "$SVC_PID" 2>/dev/null
	fi
	wait "$SVC_PID" 2>/dev/null || true
	SVC_PID=""
}
cleanup() {
	stop_service
	forget_keys
	if [ "${BENCH_KEEP_DB:-0}" != 1 ]; then
		mysqlq -e "DROP DATABASE IF EXISTS \`$DB\`" || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PPROF_ADDR="127.0.0.1:$((PORT + 1))"
rm -f "$OUT"/*.cpu.pprof "$OUT"/*.cpu.top.txt "$OUT"/*.cpu.cum.txt
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# The validate scenario sends one app token's validations far past the
# default budgets of a caller and a user (cmd/couponsvc/config.go): the
# limiters still run and are paid for, with budgets no run meets.
echo "== start couponsvc on 127.0.0.1:$PORT"
if [ -n "${BENCH_DB_MAX_OPEN:-}" ]; then
	export COUPON_DB_MAX_OPEN="$BENCH_DB_MAX_OPEN"
	echo "== COUPON_DB_MAX_OPEN=$COUPON_DB_MAX_OPEN"
fi
COUPON_MYSQL_DSN="$MYSQL_USER@tcp($MYSQL_HOST:$MYSQL_PORT)/$DB" \
	COUPON_REDIS_ADDR="$REDIS_ADDR" \
	COUPON_LISTEN="127.0.0.1:$PORT" \
	COUPON_BOOTSTRAP_TOKEN="$TOKEN" \
	COUPON_DEMO=0 \
	COUPON_PPROF_LISTEN="$PPROF_ADDR" \
	COUPON_REDIS_PREFIX="$KEY_PREFIX" \
	COUPON_WEBHOOK_ALLOW_PRIVATE=1 \
	COUPON_RATE_VALIDATE_PER_MIN=1000000 \
	COUPON_RATE_VALIDATE_USER_PER_MIN=1000000 \
	"$OUT/couponsvc" serve >"$OUT/couponsvc.log" 2>&1 &
SVC_PID=$!

ready=0
for _ in $(seq 1 120); do
	if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/readyz"; then
		ready=1
		break
	fi
	kill -0 "$SVC_PID" 2>/dev/null || break
	sleep 0.5
done
if [ "$ready" != 1 ]; then
	echo "bench/run.sh: couponsvc did not become ready; its log:" >&2
	tail -n 40 "$OUT/couponsvc.log" >&2
	exit 1
fi

ARGS=(-url "http://127.0.0.1:$PORT" -token "$TOKEN" -scenario "$SCENARIO" -concurrency "$CONC"
	-mysql-dsn "$MYSQL_USER@tcp($MYSQL_HOST:$MYSQL_PORT)/$DB" -redis-addr "$REDIS_ADDR"
	-service-pid "$SVC_PID" -json "$OUT/bench.json" -markdown "$OUT/bench.md"
	-open-loop "${BENCH_OPEN_LOOP:-0.5}")
[ "$SHORT" = 1 ] && ARGS+=(-short)
# shellcheck disable=SC2206 # word splitting of the extra flags is meant
[ -n "${BENCH_ARGS:-}" ] && ARGS+=(${BENCH_ARGS})
# The CPU of Redis and MariaDB per scenario, beside couponbench's and the
# service's: on one machine they share the cores.
WATCH=""
REDIS_PID=$(pgrep -f "redis-server.*:$REDIS_PORT\b" | head -n 1 || true)
MYSQL_PID=$(pgrep -x mariadbd | head -n 1 || pgrep -x mysqld | head -n 1 || true)
[ -n "$REDIS_PID" ] && WATCH="redis-server=$REDIS_PID"
[ -n "$MYSQL_PID" ] && WATCH="${WATCH:+$WATCH,}mariadb=$MYSQL_PID"
[ -n "$WATCH" ] && ARGS+=(-watch-cpu "$WATCH")
[ "${BENCH_PROFILE_SELF:-0}" = 1 ] && ARGS+=(-cpuprofile "$OUT/couponbench.cpu.pprof")
[ "${BENCH_WEBHOOK:-0}" = 1 ] && ARGS+=(-webhook)
# A CPU profile of each service scenario, when the service serves pprof.
if curl -fsS -o /dev/null --max-time 2 "http://$PPROF_ADDR/debug/pprof/"; then
	ARGS+=(-pprof "http://$PPROF_ADDR" -pprof-dir "$OUT")
else
	echo "== no pprof listener on $PPROF_ADDR: no CPU profiles"
fi
echo "== couponbench ${ARGS[*]//$TOKEN/\$TOKEN}"
set +e
"$OUT/couponbench" "${ARGS[@]}" | tee "$OUT/bench.txt"
RC=${PIPESTATUS[0]}
set -e

# The measures of the targets, taken again in rounds: each scenario next to
# its reference, so that a change of the machine's pace between them moves
# both; raworder serves redeem and cartcheckout, run between them.
NOTE=""
[ "$ALONE" = 0 ] && NOTE="not alone (load average $LOAD1 at the start), not for BENCHMARKS.md"
[ "$SHORT" = 1 ] && NOTE="${NOTE:+$NOTE; }--short: every count divided by 50, not for BENCHMARKS.md"
RB_REQUESTS=200000
[ "$SHORT" = 1 ] && RB_REQUESTS=4000
# redis-benchmark runs coupon_deduct.lua as the service's claims of a sold-out
# template find it: the script answers 2 (sold out) and writes nothing.
redis_benchmark_claim() { # redis_benchmark_claim FILE: requests/s into FILE
	local p="${KEY_PREFIX}rb:{c0}:" sha now
	sha=$(rcli SCRIPT LOAD "$(cat lua/coupon_deduct.lua)")
	now=$(($(date +%s) * 1000))
	rcli SET "${p}budget" -1 >/dev/null
	rcli HSET "${p}t:1" remaining 0 next 11 total 10 limit 1 value 500 gen 1 >/dev/null
	rcli SET "${p}t:1:rule" "active|0||" >/dev/null
	redis-benchmark -h "$REDIS_HOST" -p "$REDIS_PORT" -c "$CONC" -n "$RB_REQUESTS" -r 1000000 -q --csv \
		EVALSHA "$sha" 7 "${p}budget" "${p}t:1" "${p}t:1:free" "${p}t:1:users" "${p}idem:__rand_int__" "${p}pending" \
		"${p}t:1:rule" 1 "u__rand_int__" "r__rand_int__" "$now" 86400 |
		tail -n 1 | cut -d, -f2 | tr -d '"' >"$1"
	rcli DEL "${p}budget" "${p}t:1" "${p}t:1:rule" >/dev/null
}
ALONE_ARGS=(-url "http://127.0.0.1:$PORT" -token "$TOKEN" -concurrency "$CONC"
	-mysql-dsn "$MYSQL_USER@tcp($MYSQL_HOST:$MYSQL_PORT)/$DB" -redis-addr "$REDIS_ADDR" -open-loop 0)
[ "$SHORT" = 1 ] && ALONE_ARGS+=(-short)
rm -rf "$OUT/alone"
for r in $(seq 1 "$ROUNDS"); do
	dir="$OUT/alone/round-$r"
	mkdir -p "$dir"
	for s in claim baseline flash redis-benchmark checkout raworderlines redeem raworder cartcheckout; do
		echo "== round $r of $ROUNDS: $s"
		if [ "$s" = redis-benchmark ]; then
			if command -v redis-benchmark >/dev/null; then
				redis_benchmark_claim "$dir/redis-benchmark.txt" || echo "== redis-benchmark failed"
			else
				echo "== no redis-benchmark (Debian's redis-tools): that ratio stays n/a"
			fi
			continue
		fi
		if ! "$OUT/couponbench" "${ALONE_ARGS[@]}" -scenario "$s" -json "$dir/$s.json" >"$dir/$s.txt" 2>&1; then
			echo "== round $r: couponbench -scenario $s failed; its output:"
			tail -n 20 "$dir/$s.txt"
			RC=1
		fi
	done
done

# The idempotency keys must expire: show the TTL of one.
IDEM_TTL="none found"
key=$(rcli --scan --pattern "${KEY_PREFIX}{c*}:idem:*" | head -n 1 || true)
[ -n "$key" ] && IDEM_TTL="$(rcli TTL "$key") s"
MAX_RSS=$(jq -r '[.scenarios[] | select(.name=="flash") | .max_rss_mb // empty | floor][0] // "n/a"' "$OUT/bench.json" 2>/dev/null || echo n/a)
PER_COUPON=$(jq -r '.redis_bytes_per_coupon // "n/a" | if type=="number" then (.|floor|tostring) else . end' "$OUT/bench.json" 2>/dev/null || echo n/a)
echo
echo "== service during flash: max RSS ${MAX_RSS} MB (target <= 150 MB)"
echo "== Redis memory per claimed coupon: ${PER_COUPON} bytes; idempotency key TTL: ${IDEM_TTL}"

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
PROFILE_TOP=""
if [ -s "$OUT/flash.cpu.pprof" ]; then
	for p in "$OUT"/*.cpu.pprof; do
		go tool pprof -top -nodecount=30 "$OUT/couponsvc" "$p" >"${p%.pprof}.top.txt" 2>/dev/null || true
		go tool pprof -top -cum -nodecount=40 "$OUT/couponsvc" "$p" >"${p%.pprof}.cum.txt" 2>/dev/null || true
	done
	PROFILE_TOP=$(head -n 36 "$OUT/flash.cpu.top.txt" 2>/dev/null || true)
	echo "== CPU profiles: $OUT/*.cpu.pprof (go tool pprof -top: $OUT/*.cpu.top.txt, -top -cum: $OUT/*.cpu.cum.txt)"
fi

# The service's own counters after the run (batch sizes, script and database
# latencies, refusals), for reading beside the profiles.
curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$OUT/metrics.txt" 2>/dev/null || true
stop_service
echo "== couponsvc stopped; its log is $OUT/couponsvc.log"

SUMMARY=""
if [ "$ROUNDS" -gt 0 ]; then
	"$OUT/couponbench" summarize -note "$NOTE" -markdown "$OUT/alone.md" "$OUT/alone" >/dev/null || RC=1
	SUMMARY=$(cat "$OUT/alone.md" 2>/dev/null || true)
fi

if [ "$SHORT" = 0 ] && [ "$ALONE" = 1 ] && [ "$SCENARIO" = all ] && [ -z "${BENCH_ARGS:-}" ] && [ -z "${BENCH_SERVICE_BIN:-}" ]; then
	NOTES_MARK='<!-- notes: everything below this line is kept by bench/run.sh -->'
	NOTES=$(awk -v m="$NOTES_MARK" 'found {print} $0 == m {found=1}' BENCHMARKS.md 2>/dev/null || true)
	CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
	MEM=$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)
	{
		echo "# Benchmarks"
		echo
		echo "Generated by \`bench/run.sh\` on $(date -u +%Y-%m-%dT%H:%MZ) from commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
		echo "Everything runs on one machine: couponsvc, MariaDB, Redis and couponbench share its cores, so"
		echo "the figures that matter are the ratios to the references measured in the same run."
		echo
		echo "## Machine"
		echo
		echo "- CPU: $(nproc) cores, $CPU"
		echo "- Memory: $MEM"
		echo "- $(go version)"
		echo "- MariaDB $(mysqlq -e 'SELECT VERSION()'), innodb_flush_log_at_trx_commit=$(mysqlq -e 'SELECT @@innodb_flush_log_at_trx_commit'), buffer pool $(mysqlq -e 'SELECT @@innodb_buffer_pool_size DIV 1048576') MiB"
		echo "- Redis $(rcli INFO server | tr -d '\r' | awk -F: '/^redis_version/ {print $2}')"
		echo "- Load average (1, 5, 15 min) just before the run: $LOAD_BEFORE (other work on the machine); just after: $LOAD_AFTER"
		echo
		echo "## Commands"
		echo
		echo '```sh'
		echo "bench/run.sh            # this file; bench/run.sh --short is the CI version"
		echo "# which runs, against couponsvc started with COUPON_MYSQL_DSN=$MYSQL_USER@tcp($MYSQL_HOST:$MYSQL_PORT)/$DB"
		echo "# COUPON_REDIS_ADDR=$REDIS_ADDR COUPON_REDIS_PREFIX=$KEY_PREFIX COUPON_LISTEN=127.0.0.1:$PORT"
		echo "# COUPON_PPROF_LISTEN=$PPROF_ADDR COUPON_BOOTSTRAP_TOKEN=<random> COUPON_DEMO=0:"
		echo "couponbench ${ARGS[*]//$TOKEN/\$TOKEN}"
		echo '```'
		echo
		echo "The references: \`baseline\` is the classic claim (a MariaDB transaction per claim:"
		echo "\`UPDATE bench_template SET stock=stock-1 WHERE id=? AND stock>0\` then \`INSERT\` of the coupon);"
		echo "\`limit\` is \`lua/coupon_deduct.lua\` run straight on Redis with go-redis on the flash plan;"
		echo "\`rawredeem\` is the bare \"UPDATE coupon + INSERT log\" transaction. Both MariaDB references"
		echo "use their own tables, a pool of 64 connections and client-side parameter interpolation"
		echo "(one round trip per statement), at the same concurrency as the service scenarios."
		echo "\`claim-open\` and \`flash-open\` run \`claim\` and \`flash\` again open loop: requests leave on a"
		echo "schedule at half the answers/s just measured (\`-open-loop 0.5\`), whatever the answers do, and"
		echo "each latency runs from the request's scheduled time, so that a slow answer cannot hide the queue"
		echo "behind it. The Redis table splits each flash sale at its first \`sold_out\` answer (INFO deltas)."
		echo "\`checkout\` is the online checkout beside the one-step \`redeem\`: each order holds its coupon, then"
		echo "confirms (~85%), releases (~10%) or is left to expire (~5%); \`checkout/rawredeem\` below counts the"
		echo "orders held and confirmed per second (two requests each) against the same bare redemption transaction."
		echo
		echo "## Results"
		echo
		if [ -n "$SUMMARY" ]; then
			echo "### The targets, taken alone ($ROUNDS rounds)"
			echo
			printf '%s\n' "$SUMMARY"
			echo
			echo "### Every scenario, one run"
			echo
		fi
		cat "$OUT/bench.md"
		echo
		echo "Service during \`flash\`: max RSS ${MAX_RSS} MB (target ≤ 150 MB). Idempotency key TTL after the run: ${IDEM_TTL}."
		echo
		if [ -n "$PROFILE_TOP" ]; then
			echo "CPU profile of couponsvc during the first seconds of \`flash\` (\`go tool pprof -top\`):"
			echo
			echo '```'
			printf '%s\n' "$PROFILE_TOP"
			echo '```'
			echo
		fi
		echo "The full output of couponbench is in \`$OUT/bench.txt\`, the JSON in \`$OUT/bench.json\`."
		echo
		echo "$NOTES_MARK"
		if [ -n "$NOTES" ]; then
			printf '%s\n' "$NOTES"
		else
			echo
			echo "## Notes"
			echo
			echo "What the profile showed and what stands in the way of a missed target goes here; bench/run.sh keeps this part."
		fi
	} >BENCHMARKS.md.tmp
	mv BENCHMARKS.md.tmp BENCHMARKS.md
	echo "== BENCHMARKS.md rewritten"
fi

if [ -n "$SUMMARY" ]; then
	echo
	echo "== the targets, median and spread over $ROUNDS rounds (also in $OUT/alone.md):"
	echo
	printf '%s\n' "$SUMMARY"
fi
exit "$RC"
