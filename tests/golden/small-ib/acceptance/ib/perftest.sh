#!/usr/bin/env bash
# Perftest acceptance of fabric ib (small-ib), written by snc from the design.
# 324 ib_write_bw pairs put 388 of the fabric's 388 cabled data links under test, the
# 256 switch-to-switch cables by direction (388 of their 512 directions)
# (perftest.tsv: one test per line, its cables and their labels). A link below 60 % of its
# line rate is a fault (signal integrity or configuration); `snc check-results` names it by cable label.
#
# Usage: perftest.sh RESULTS_DIR [STAGE [RAIL]]
#   STAGE: endpoint, tier1-2 (default: all, in that order); RAIL: one rail only.
#   SSH (default ssh) runs a command on a host; DURATION (default 10) seconds per ib_write_bw;
#   PARALLEL (default 64) tests at once; tests of one wave share no NIC.
# Tier tests are pairs on the routes the subnet manager's ftree engine programs (modelled by snc
# on the plan's GUIDs): each path carries the cables the test names, every switch-link direction
# a route loads is on some path (124 directions no HCA-bound route loads: untestable.tsv),
# and tests of one wave share no link direction. Each test records its path (ibtracert, by the
# two ports' LIDs) in RESULTS_DIR/perftest/<test>.trace.txt, to compare with the plan's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:?usage: perftest.sh RESULTS_DIR [STAGE [RAIL]]}
want_stage=${2:-}
want_rail=${3:-}
SSH=${SSH:-ssh}
DURATION=${DURATION:-10}
PARALLEL=${PARALLEL:-64}
EXTRA=()
RDMA_CM=0
mkdir -p "$results/perftest"

# A plan value becomes one argument of a remote command, whatever it holds: ssh joins its
# arguments into one line for the remote shell, so every word is quoted for that shell here.
remote() {  # host, then the command and its arguments
  local host=$1
  shift
  $SSH "$host" "$(printf '%q ' "$@")"
}

run_test() {  # id server server_dev client client_dev tcp_port server_address [server LID]
  local id=$1 server=$2 sdev=$3 client=$4 cdev=$5 port=$6 saddr=$7 dlid=${8:-} target=$2 pid
  local extra=("${EXTRA[@]}") aim=()
  [ -z "$dlid" ] || aim=(--dlid "$dlid")  # the client sends to that LID of the server's port
  if [ "$RDMA_CM" = 1 ] && [ -n "$saddr" ]; then
    target=$saddr
    extra+=(-R)
  fi
  remote "$server" ib_write_bw -d "$sdev" -i 1 -F --report_gbits -D "$DURATION" -p "$port" "${extra[@]}" >/dev/null 2>&1 &
  pid=$!
  sleep 2
  remote "$client" ib_write_bw -d "$cdev" -i 1 -F --report_gbits -D "$DURATION" -p "$port" "${extra[@]}" "${aim[@]}" "$target" \
    >"$results/perftest/$id.bw.txt" 2>&1 || true
  wait "$pid" || true
  if [ "$RDMA_CM" = 0 ] && [ -z "${EXTRA[*]}" ]; then  # InfiniBand: the path the subnet manager routed
    local slid clid
    slid=$dlid
    [ -n "$slid" ] || slid=$(remote "$server" cat "/sys/class/infiniband/$sdev/ports/1/lid" 2>/dev/null || true)
    clid=$(remote "$client" cat "/sys/class/infiniband/$cdev/ports/1/lid" 2>/dev/null || true)
    remote "$client" ibtracert -C "$cdev" -P 1 "$clid" "$slid" >"$results/perftest/$id.trace.txt" 2>&1 || true
  fi
  remote "$server" ib_write_lat -d "$sdev" -i 1 -F -p "$port" "${extra[@]}" >/dev/null 2>&1 &
  pid=$!
  sleep 2
  remote "$client" ib_write_lat -d "$cdev" -i 1 -F -p "$port" "${extra[@]}" "${aim[@]}" "$target" >"$results/perftest/$id.lat.txt" 2>&1 || true
  wait "$pid" || true
}

# What a field handed to a host may look like: a name or an address (never an option, a path or
# shell text); a line with anything else is refused, not run.
name_re='^[A-Za-z0-9][A-Za-z0-9_.:-]*$'
columns=17
fabric=ib

current=""
slot=0
lineno=0
# Each line is split on exactly its tabs (bash's read would merge a run of tabs, so an empty cell
# such as rail or via would shift every field after it).
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  [ "$lineno" = 1 ] && continue
  f=()
  rest=$line
  while [[ $rest == *$'\t'* ]]; do
    f+=("${rest%%$'\t'*}")
    rest=${rest#*$'\t'}
  done
  f+=("$rest")
  if [ "${#f[@]}" != "$columns" ]; then
    echo "perftest.tsv:$lineno: ${#f[@]} fields, expected $columns; line skipped" >&2
    continue
  fi
  id=${f[0]} stage=${f[1]} rail=${f[2]} wave=${f[3]} server=${f[4]} sdev=${f[5]} client=${f[7]} cdev=${f[8]} saddr=${f[15]}
  dlid=${f[17]:-}
  ok=1
  for v in "$id" "$server" "$sdev" "$client" "$cdev"; do [[ $v =~ $name_re ]] || ok=0; done
  [ -z "$saddr" ] || [[ $saddr =~ $name_re ]] || ok=0
  [ -z "$dlid" ] || [[ $dlid =~ ^[1-9][0-9]{0,4}$ ]] || ok=0
  if [ "$ok" != 1 ]; then
    echo "perftest.tsv:$lineno: a test, host, device, address or LID that is not a plain name; line skipped" >&2
    continue
  fi
  [ -n "$want_stage" ] && [ "$stage" != "$want_stage" ] && continue
  [ -n "$want_rail" ] && [ "$rail" != "$want_rail" ] && continue
  if [ "$stage/$rail/$wave" != "$current" ]; then
    wait
    current="$stage/$rail/$wave"
    slot=0
    printf '== %s %s rail %s wave %s\n' "$fabric" "$stage" "${rail:--}" "$wave"
  fi
  run_test "$id" "$server" "$sdev" "$client" "$cdev" $((18515 + slot)) "$saddr" "$dlid" &
  slot=$((slot + 1))
  if [ "$slot" -ge "$PARALLEL" ]; then
    wait
    slot=0
  fi
done <"$here/perftest.tsv"
wait
echo "done; check with: snc check-results $(dirname "$here") $results"
