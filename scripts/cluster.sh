#!/usr/bin/env bash
# scripts/cluster.sh start|stop|status|restart
#
# The two-region topology of docker-compose.yml, as local processes on 127.0.0.1:
#   redis-primary (us-east-1, AOF on)         records, root keys, consistent buckets
#   us-east-1: keyward-use1-a, keyward-use1-b, each with its own Redis (redis-use1-a/-b),
#              behind lb-use1 (HAProxy)
#   eu-west-1: keyward-euw1-a, keyward-euw1-b, each with its own Redis (redis-euw1-a/-b),
#              behind lb-euw1 (HAProxy)
#
#   start    install what is missing (redis-server, haproxy), build dist/ if missing, start
#            everything, wait for GET /v1/liveness, create a root key, print the entry points
#   stop     stop everything this script started (load balancers, nodes, then Redis)
#   status   one line per process; exit 0 when all are up, 3 otherwise
#   restart  rolling restart of every node: drain it at its load balancer, SIGTERM, start it
#            again, wait for liveness, put it back; the entry points keep answering throughout
#
# Ports: KEYWARD_CLUSTER_PORT_BASE (default 18000) + 81/82 for the us-east-1/eu-west-1 entry
# points, + 101..104 for the nodes, + 379 for the primary and + 380..383 for the node-local Redis
# servers, so `make run` (8080, 6379) keeps working beside it. LOG_LEVEL sets the nodes' log level.
# Everything lives under .run/cluster/: pids/, logs/, data/ (the primary's AOF survives a stop),
# lb/ (rendered HAProxy configs and their admin sockets), root-key.json.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
RUN="$ROOT/.run/cluster"
PIDS="$RUN/pids"
LOGS="$RUN/logs"
HOST=127.0.0.1

REDIS_NAMES=(redis-primary redis-use1-a redis-use1-b redis-euw1-a redis-euw1-b)
NODE_NAMES=(keyward-use1-a keyward-use1-b keyward-euw1-a keyward-euw1-b)
LB_NAMES=(lb-use1 lb-euw1)

# The port base in force: the one recorded by `start` while a cluster exists, else the variable.
port_base() {
  if [ -f "$RUN/port-base" ]; then cat "$RUN/port-base"; else echo "${KEYWARD_CLUSTER_PORT_BASE:-18000}"; fi
}
check_base() {
  if ! [[ "$BASE" =~ ^[0-9]+$ ]] || [ "$BASE" -lt 1024 ] || [ "$BASE" -gt 65000 ]; then
    echo "cluster: KEYWARD_CLUSTER_PORT_BASE must be a number between 1024 and 65000" >&2
    exit 2
  fi
}
BASE="$(port_base)"
check_base

port_of() {
  case "$1" in
    lb-use1) echo $((BASE + 81)) ;;
    lb-euw1) echo $((BASE + 82)) ;;
    keyward-use1-a) echo $((BASE + 101)) ;;
    keyward-use1-b) echo $((BASE + 102)) ;;
    keyward-euw1-a) echo $((BASE + 103)) ;;
    keyward-euw1-b) echo $((BASE + 104)) ;;
    redis-primary) echo $((BASE + 379)) ;;
    redis-use1-a) echo $((BASE + 380)) ;;
    redis-use1-b) echo $((BASE + 381)) ;;
    redis-euw1-a) echo $((BASE + 382)) ;;
    redis-euw1-b) echo $((BASE + 383)) ;;
    *) echo "cluster: unknown component $1" >&2; return 1 ;;
  esac
}

region_of() {
  case "$1" in
    redis-primary | *use1*) echo us-east-1 ;;
    *euw1*) echo eu-west-1 ;;
  esac
}

role_of() {
  case "$1" in
    redis-primary) echo primary ;;
    redis-*) echo local ;;
    keyward-*) echo node ;;
    lb-*) echo "load balancer" ;;
  esac
}

# keyward-use1-a -> redis-use1-a; lb-use1 -> keyward-use1-a keyward-use1-b
local_redis_of() { echo "redis-${1#keyward-}"; }
lb_of() { local n="${1#keyward-}"; echo "lb-${n%-*}"; }
nodes_of_lb() {
  local short="${1#lb-}" node
  for node in "${NODE_NAMES[@]}"; do
    [[ "$node" == "keyward-$short-"* ]] && echo "$node"
  done
}

# What a process's command line must contain for its pid file to be trusted (pids get reused).
marker_of() {
  case "$1" in
    redis-*) echo redis-server ;;
    keyward-*) echo dist/cli.js ;;
    lb-*) echo haproxy ;;
  esac
}

pid_of() {
  local file="$PIDS/$1.pid" pid cmdline
  [ -s "$file" ] || return 1
  pid="$(cat "$file")"
  pid_alive "$pid" || return 1
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
  [[ "$cmdline" == *"$(marker_of "$1")"* ]] || return 1
  echo "$pid"
}

is_running() { pid_of "$1" >/dev/null; }

# A pid that still runs (an exited child that nobody reaped yet is a zombie, not running).
pid_alive() {
  local stat
  kill -0 "$1" 2>/dev/null || return 1
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [ "${stat:0:1}" != Z ]
}

# Starts a command in its own session (Ctrl-C in this terminal does not reach it), output to the
# component's log, and records its pid.
start_process() {
  local name="$1"
  shift
  mkdir -p "$PIDS" "$LOGS"
  setsid nohup "$@" >>"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$PIDS/$name.pid"
}

# The HTTP status of a GET, 000 when nothing answers.
http_status() {
  local code=""
  if command -v curl >/dev/null; then
    code="$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" 2>/dev/null)" || true
  else
    code="$(node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(2000) }).then(
      (r) => process.stdout.write(String(r.status)), () => process.stdout.write("000"))' "$1")" || true
  fi
  echo "${code:-000}"
}

wait_for() { # wait_for DESCRIPTION SECONDS COMMAND...
  local what="$1" seconds="$2" i
  shift 2
  for ((i = 0; i < seconds * 10; i++)); do
    if "$@"; then return 0; fi
    sleep 0.1
  done
  echo "cluster: $what did not come up within ${seconds} s" >&2
  return 1
}

redis_answers() { [ "$(redis-cli -h "$HOST" -p "$(port_of "$1")" ping 2>/dev/null)" = PONG ]; }
node_is_live() { [ "$(http_status "http://$HOST:$(port_of "$1")/v1/liveness")" = 200 ]; }

# Waits for a node's liveness; gives up at once when its process has exited.
wait_for_node() {
  local name="$1" i
  for ((i = 0; i < 300; i++)); do
    if ! is_running "$name"; then
      echo "cluster: $name exited during start-up" >&2
      tail_logs "$name"
      return 1
    fi
    if node_is_live "$name"; then return 0; fi
    sleep 0.1
  done
  echo "cluster: $name did not answer GET /v1/liveness with 200 within 30 s" >&2
  tail_logs "$name"
  return 1
}
lb_is_live() { [ "$(http_status "http://$HOST:$(port_of "$1")/v1/liveness")" = 200 ]; }

port_in_use() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# One command on a load balancer's runtime API (a unix socket); prints the answer.
lb_cmd() {
  # shellcheck disable=SC2016 # JavaScript, not shell, in single quotes
  node -e '
const socket = require("node:net").connect(process.argv[1]);
let out = "";
socket.on("connect", () => socket.write(process.argv[2] + "\n"));
socket.on("data", (chunk) => (out += chunk));
socket.on("end", () => process.stdout.write(out));
socket.on("error", (error) => {
  process.stderr.write(`cluster: ${process.argv[1]}: ${error.message}\n`);
  process.exit(1);
});
' "$RUN/lb/$1.sock" "$2"
}

# "<state> <current sessions>" of a node as its load balancer sees it, e.g. "UP 0", "MAINT 1".
lb_server_state() {
  { lb_cmd "$(lb_of "$1")" "show stat" || true; } |
    awk -F, -v srv="$1" '$1 == "keyward" && $2 == srv { found = 1; print $18, $5 } END { if (!found) print "UNKNOWN", 0 }'
}

stop_process() { # stop_process NAME GRACE_SECONDS
  local name="$1" grace="$2" pid i
  if ! pid="$(pid_of "$name")"; then
    rm -f "$PIDS/$name.pid"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 10; i++)); do
    pid_alive "$pid" || break
    sleep 0.1
  done
  if pid_alive "$pid"; then
    echo "cluster: $name (pid $pid) still running after ${grace} s; sending SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDS/$name.pid"
  echo "  stopped $name (pid $pid)"
}

start_redis() {
  local name="$1" aof=no
  mkdir -p "$RUN/data/$name"
  [ "$name" = redis-primary ] && aof=yes
  start_process "$name" redis-server --port "$(port_of "$name")" --bind "$HOST" \
    --dir "$RUN/data/$name" --appendonly "$aof" --appendfsync everysec --save '' \
    --daemonize no --loglevel notice
}

start_node() {
  local name="$1"
  start_process "$name" env \
    KEYWARD_PORT="$(port_of "$name")" \
    KEYWARD_HOST="$HOST" \
    KEYWARD_REDIS_URL="redis://$HOST:$(port_of redis-primary)" \
    KEYWARD_LOCAL_REDIS_URL="redis://$HOST:$(port_of "$(local_redis_of "$name")")" \
    KEYWARD_REGION="$(region_of "$name")" \
    LOG_LEVEL="${LOG_LEVEL:-info}" \
    node "$ROOT/dist/cli.js" serve
}

render_lb_config() {
  local lb="$1" servers="" node
  for node in $(nodes_of_lb "$lb"); do
    servers+="  server $node $HOST:$(port_of "$node")"$'\n'
  done
  mkdir -p "$RUN/lb"
  LB_NAME="$lb" LB_BIND="$HOST:$(port_of "$lb")" ADMIN_SOCKET="$RUN/lb/$lb.sock" \
    SERVERS="${servers%$'\n'}" awk '
    /^[ \t]*@SERVERS@[ \t]*$/ { print ENVIRON["SERVERS"]; next }
    {
      gsub(/@LB_NAME@/, ENVIRON["LB_NAME"])
      gsub(/@LB_BIND@/, ENVIRON["LB_BIND"])
      gsub(/@ADMIN_SOCKET@/, ENVIRON["ADMIN_SOCKET"])
      print
    }' deploy/haproxy-local.cfg.in >"$RUN/lb/$lb.cfg"
  haproxy -c -q -f "$RUN/lb/$lb.cfg"
}

start_lb() {
  local lb="$1"
  render_lb_config "$lb"
  rm -f "$RUN/lb/$lb.sock"
  start_process "$lb" haproxy -db -f "$RUN/lb/$lb.cfg"
}

all_names() { printf '%s\n' "${REDIS_NAMES[@]}" "${NODE_NAMES[@]}" "${LB_NAMES[@]}"; }

stop_all() {
  local name
  for name in "${LB_NAMES[@]}"; do stop_process "$name" 5; done
  for name in "${NODE_NAMES[@]}"; do stop_process "$name" 15; done
  for name in "${REDIS_NAMES[@]}"; do stop_process "$name" 10; done
  rm -f "$RUN/lb/"*.sock "$RUN/port-base"
}

tail_logs() {
  local name
  for name in "$@"; do
    [ -s "$LOGS/$name.log" ] || continue
    echo "---- last lines of $LOGS/$name.log" >&2
    tail -n 15 "$LOGS/$name.log" >&2
  done
}

cmd_start() {
  local name running=0 busy=()
  for name in $(all_names); do is_running "$name" && running=$((running + 1)); done
  if [ "$running" -gt 0 ]; then
    echo "cluster: $running process(es) of a cluster are already running; see 'scripts/cluster.sh status'," >&2
    echo "or stop them first with 'scripts/cluster.sh stop'" >&2
    exit 1
  fi
  # Nothing runs: a port base left by an earlier run no longer binds; the variable decides.
  rm -f "$RUN/port-base"
  BASE="$(port_base)"
  check_base
  for name in $(all_names); do port_in_use "$(port_of "$name")" && busy+=("$(port_of "$name")"); done
  if [ "${#busy[@]}" -gt 0 ]; then
    echo "cluster: port(s) ${busy[*]} on $HOST are taken; set KEYWARD_CLUSTER_PORT_BASE to another base" >&2
    exit 1
  fi

  scripts/ensure-tool.sh redis-server redis-server
  scripts/ensure-tool.sh redis-cli redis-tools
  scripts/ensure-tool.sh haproxy haproxy
  if [ ! -f dist/cli.js ]; then
    echo "building dist/ ..."
    npm run --silent build
  fi

  mkdir -p "$RUN" "$PIDS" "$LOGS"
  echo "$BASE" >"$RUN/port-base"
  START_OK=0
  trap '[ "$START_OK" = 1 ] || { echo "cluster: start failed; stopping what was started" >&2; stop_all >&2; }' EXIT

  for name in "${REDIS_NAMES[@]}"; do start_redis "$name"; done
  for name in "${REDIS_NAMES[@]}"; do
    wait_for "$name" 10 redis_answers "$name" || { tail_logs "$name"; false; }
  done
  for name in "${NODE_NAMES[@]}"; do start_node "$name"; done
  for name in "${NODE_NAMES[@]}"; do wait_for_node "$name"; done
  for name in "${LB_NAMES[@]}"; do start_lb "$name"; done
  for name in "${LB_NAMES[@]}"; do
    wait_for "$name" 10 lb_is_live "$name" || { tail_logs "$name"; false; }
  done

  local root_json root_key
  root_json="$(KEYWARD_REDIS_URL="redis://$HOST:$(port_of redis-primary)" \
    node dist/cli.js root create --name cluster)"
  (umask 077 && echo "$root_json" >"$RUN/root-key.json")
  root_key="$(node -e 'process.stdout.write(JSON.parse(process.argv[1]).key)' "$root_json")"
  START_OK=1

  cat <<MSG

  keyward cluster is up: 2 regions, 4 nodes, 1 primary Redis (processes on $HOST)

  entry points (one per region, HAProxy):
    us-east-1  http://$HOST:$(port_of lb-use1)   -> keyward-use1-a :$(port_of keyward-use1-a), keyward-use1-b :$(port_of keyward-use1-b)
    eu-west-1  http://$HOST:$(port_of lb-euw1)   -> keyward-euw1-a :$(port_of keyward-euw1-a), keyward-euw1-b :$(port_of keyward-euw1-b)
  primary:     redis://$HOST:$(port_of redis-primary)   (us-east-1, AOF in .run/cluster/data/redis-primary)
  root key:    $root_key
               (also in .run/cluster/root-key.json)
  logs:        .run/cluster/logs/<name>.log     pids: .run/cluster/pids/<name>.pid

  try:    curl -s http://$HOST:$(port_of lb-use1)/v1/liveness
  status: scripts/cluster.sh status    rolling restart: scripts/cluster.sh restart
  stop:   scripts/cluster.sh stop

MSG
}

cmd_stop() {
  local name any=0
  for name in $(all_names); do [ -e "$PIDS/$name.pid" ] && any=1; done
  if [ "$any" -eq 0 ]; then
    echo "cluster: nothing to stop"
    rm -f "$RUN/port-base"
    return 0
  fi
  echo "stopping the cluster:"
  stop_all
}

cmd_status() {
  local name pid state down=0 port
  printf '%-16s %-10s %-14s %-24s %-8s %s\n' NAME REGION ROLE ADDRESS PID STATE
  for name in $(all_names); do
    port="$(port_of "$name")"
    if pid="$(pid_of "$name")"; then
      case "$name" in
        redis-*) if redis_answers "$name"; then state=up; else state="not answering PING"; down=1; fi ;;
        keyward-*)
          state="$(http_status "http://$HOST:$port/v1/liveness")"
          if [ "$state" = 200 ]; then state="live"; else state="liveness $state"; down=1; fi
          if [ -S "$RUN/lb/$(lb_of "$name").sock" ] && is_running "$(lb_of "$name")"; then
            state+=", at $(lb_of "$name"): $(lb_server_state "$name" | awk '{print $1}')"
          fi
          ;;
        lb-*)
          state="$(http_status "http://$HOST:$port/v1/liveness")"
          if [ "$state" = 200 ]; then state="up"; else state="liveness $state"; down=1; fi
          ;;
      esac
    else
      pid=-
      state=stopped
      down=1
    fi
    case "$name" in
      redis-*) port="redis://$HOST:$port" ;;
      *) port="http://$HOST:$port" ;;
    esac
    printf '%-16s %-10s %-14s %-24s %-8s %s\n' "$name" "$(region_of "$name")" "$(role_of "$name")" \
      "$port" "$pid" "$state"
  done
  [ -f "$RUN/root-key.json" ] && echo "root key: .run/cluster/root-key.json"
  echo "logs: .run/cluster/logs/   pids: .run/cluster/pids/"
  [ "$down" -eq 0 ] || return 3
}

# Drain, stop, start, re-enable, one node at a time; each region keeps one node serving.
cmd_restart() {
  local name pid lb i state sessions started
  for name in "${NODE_NAMES[@]}"; do
    if ! pid="$(pid_of "$name")"; then
      echo "cluster: $name is not running; start the cluster first" >&2
      exit 1
    fi
  done
  for name in "${NODE_NAMES[@]}"; do
    lb="$(lb_of "$name")"
    started=$(date +%s%N)
    pid="$(pid_of "$name")"
    # 1. No new requests for this node; wait until those it has are answered (at most 10 s).
    lb_cmd "$lb" "set server keyward/$name state maint" >/dev/null
    for ((i = 0; i < 100; i++)); do
      read -r state sessions < <(lb_server_state "$name")
      [ "${sessions:-0}" -eq 0 ] && break
      sleep 0.1
    done
    # 2. SIGTERM: the node finishes what it has in flight and exits (SIGKILL after 30 s).
    stop_process "$name" 30
    # 3. Start it again and wait for its liveness, then 4. let the load balancer use it again.
    start_node "$name"
    wait_for_node "$name"
    lb_cmd "$lb" "set server keyward/$name state ready" >/dev/null
    for ((i = 0; i < 100; i++)); do
      read -r state sessions < <(lb_server_state "$name")
      [ "$state" = UP ] && break
      sleep 0.1
    done
    echo "  restarted $name (pid $pid -> $(pid_of "$name")) in $((($(date +%s%N) - started) / 1000000)) ms; $lb says $state"
  done
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  restart) cmd_restart ;;
  *)
    echo "usage: $0 start|stop|status|restart" >&2
    exit 2
    ;;
esac
