#!/usr/bin/env bash
# Starts or stops the throw-away Redis Cluster used by CI: three masters, no
# replicas, on 127.0.0.1:7000-7002 (cluster bus on 17000-17002), nothing on disk
# but a fresh temporary directory per node.
#
#   .ci/redis-cluster.sh start    start it, or reuse a healthy one after FLUSHALL
#   .ci/redis-cluster.sh stop     shut the nodes down and remove their directories
#   .ci/redis-cluster.sh status   print `cluster info` of each node; 0 when healthy
#
# Environment: REDIS_CLUSTER_PORTS (default "7000 7001 7002"),
# REDIS_CLUSTER_STATE (where node directories live, default
# ${TMPDIR:-/tmp}/couponsvc-redis-cluster).
set -euo pipefail

HOST=127.0.0.1
read -r -a PORTS <<<"${REDIS_CLUSTER_PORTS:-7000 7001 7002}"
STATE=${REDIS_CLUSTER_STATE:-${TMPDIR:-/tmp}/couponsvc-redis-cluster}

log() { echo "[redis-cluster] $*"; }
die() { echo "[redis-cluster] ERROR: $*" >&2; exit 1; }

cli() { # cli PORT ARGS...
	local port=$1
	shift
	timeout "${CLI_TIMEOUT:-5}" redis-cli -h "$HOST" -p "$port" "$@"
}

answers() { [ "$(CLI_TIMEOUT=3 cli "$1" ping 2>/dev/null)" = "PONG" ]; }

info_field() { # info_field PORT FIELD: a field of `cluster info`
	cli "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"
}

# healthy: every node answers, is a cluster node, sees all the others and says
# cluster_state:ok with all 16384 slots served by as many masters as nodes.
healthy() {
	local port
	for port in "${PORTS[@]}"; do
		answers "$port" || return 1
		[ "$(info_field "$port" cluster_state)" = ok ] || return 1
		[ "$(info_field "$port" cluster_slots_ok)" = 16384 ] || return 1
		[ "$(info_field "$port" cluster_known_nodes)" = "${#PORTS[@]}" ] || return 1
		[ "$(info_field "$port" cluster_size)" = "${#PORTS[@]}" ] || return 1
	done
}

# stop_node PORT: shut down whatever Redis answers on PORT, then make sure the
# process we started there (pid file) is gone.
stop_node() {
	local port=$1 pidfile pid i
	if answers "$port"; then
		cli "$port" shutdown nosave >/dev/null 2>&1 || true
	fi
	for pidfile in "$STATE"/node-"$port".*/redis.pid; do
		[ -f "$pidfile" ] || continue
		pid=$(cat "$pidfile" 2>/dev/null || true)
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
			grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null; then
			for i in $(seq 1 50); do
				kill -0 "$pid" 2>/dev/null || break
				[ "$i" = 20 ] && kill "$pid" 2>/dev/null || true
				[ "$i" = 40 ] && kill -9 "$pid" 2>/dev/null || true
				sleep 0.2
			done
		fi
	done
	for i in $(seq 1 50); do
		answers "$port" || break
		sleep 0.2
	done
	answers "$port" && die "a Redis on port $port does not shut down"
	rm -rf "$STATE"/node-"$port".*
}

start_node() {
	local port=$1 dir i
	mkdir -p "$STATE"
	dir=$(mktemp -d "$STATE/node-$port.XXXXXX")
	redis-server --cluster-enabled yes --cluster-config-file "nodes-$port.conf" \
		--port "$port" --bind "$HOST" --save "" --appendonly no --daemonize yes \
		--dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
		--cluster-node-timeout 5000 ||
		die "redis-server on port $port did not start (log: $dir/redis.log)"
	for i in $(seq 1 100); do
		answers "$port" && return 0
		sleep 0.1
	done
	tail -n 20 "$dir/redis.log" >&2 || true
	die "redis-server on port $port does not answer PING"
}

cmd_start() {
	command -v redis-server >/dev/null || die "redis-server is not installed"
	command -v redis-cli >/dev/null || die "redis-cli is not installed"
	local port nodes=() i
	if healthy; then
		log "reusing the healthy cluster on ports ${PORTS[*]}: FLUSHALL + SCRIPT FLUSH on each node"
		for port in "${PORTS[@]}"; do
			[ "$(cli "$port" flushall | tr -d '\r')" = OK ] || die "FLUSHALL failed on port $port"
			cli "$port" script flush >/dev/null || die "SCRIPT FLUSH failed on port $port"
		done
		log "cluster ready: ${PORTS[*]/#/$HOST:}"
		return 0
	fi
	for port in "${PORTS[@]}"; do
		if answers "$port" || compgen -G "$STATE/node-$port.*" >/dev/null; then
			log "shutting down the stale node on port $port"
		fi
		stop_node "$port"
	done
	for port in "${PORTS[@]}"; do
		start_node "$port"
		nodes+=("$HOST:$port")
	done
	log "creating the cluster: ${nodes[*]}"
	timeout 60 redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes | sed "s/\x1b\[[0-9;]*m//g" ||
		die "redis-cli --cluster create failed"
	for i in $(seq 1 300); do
		if healthy; then
			log "cluster ready: ${nodes[*]}"
			return 0
		fi
		sleep 0.1
	done
	cmd_status >&2 || true
	die "the cluster did not reach cluster_state:ok within 30s"
}

cmd_stop() {
	local port
	for port in "${PORTS[@]}"; do
		stop_node "$port"
	done
	rmdir "$STATE" 2>/dev/null || true
	log "stopped (ports ${PORTS[*]})"
}

cmd_status() {
	local port
	for port in "${PORTS[@]}"; do
		if answers "$port"; then
			echo "$HOST:$port: state=$(info_field "$port" cluster_state) slots_ok=$(info_field "$port" cluster_slots_ok) known_nodes=$(info_field "$port" cluster_known_nodes) size=$(info_field "$port" cluster_size)"
		else
			echo "$HOST:$port: down"
		fi
	done
	healthy
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
