#!/usr/bin/env bash
# Perftest acceptance of fabric ib (small-ib), written by snc from the design.
# 196 ib_write_bw pairs put each of the fabric's 388 cabled data links under test once
# (perftest.tsv: one test per line, its cables and their labels). A link below 60 % of its
# line rate is a fault (signal integrity or configuration); `snc check-results` names it by cable label.
#
# Usage: perftest.sh RESULTS_DIR [STAGE [RAIL]]
#   STAGE: endpoint, tier1-2 (default: all, in that order); RAIL: one rail only.
#   SSH (default ssh) runs a command on a host; DURATION (default 10) seconds per ib_write_bw;
#   PARALLEL (default 64) tests at once; tests of one wave share no NIC.
# Tests whose path crosses an upper switch (tier stages) rely on the routing engine to use that
# switch: confirm a pair's path with ibtracert when its result is low.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:?usage: perftest.sh RESULTS_DIR [STAGE [RAIL]]}
want_stage=${2:-}
want_rail=${3:-}
SSH=${SSH:-ssh}
DURATION=${DURATION:-10}
PARALLEL=${PARALLEL:-64}
EXTRA=""
RDMA_CM=0
mkdir -p "$results/perftest"

run_test() {  # id server server_dev client client_dev tcp_port server_address
  local id=$1 server=$2 sdev=$3 client=$4 cdev=$5 port=$6 saddr=$7 target=$2 extra=$EXTRA pid
  if [ "$RDMA_CM" = 1 ] && [ -n "$saddr" ]; then
    target=$saddr
    extra="$EXTRA -R"
  fi
  $SSH "$server" "ib_write_bw -d $sdev -i 1 -F --report_gbits -D $DURATION -p $port $extra" >/dev/null 2>&1 &
  pid=$!
  sleep 2
  $SSH "$client" "ib_write_bw -d $cdev -i 1 -F --report_gbits -D $DURATION -p $port $extra $target" \
    >"$results/perftest/$id.bw.txt" 2>&1 || true
  wait "$pid" || true
  $SSH "$server" "ib_write_lat -d $sdev -i 1 -F -p $port $extra" >/dev/null 2>&1 &
  pid=$!
  sleep 2
  $SSH "$client" "ib_write_lat -d $cdev -i 1 -F -p $port $extra $target" >"$results/perftest/$id.lat.txt" 2>&1 || true
  wait "$pid" || true
}

current=""
slot=0
# Fields split on the unit separator, not on tabs: bash collapses runs of a whitespace IFS, so an
# empty cell (rail, via) would shift every field after it. (A copy, not a pipe: the loop's `wait`
# would also wait for the process feeding it.)
plan="$results/perftest/.plan"
tr '\t' '\037' <"$here/perftest.tsv" >"$plan"
while IFS=$'\037' read -r id stage rail wave server sdev _sport client cdev _cport _line _min _cables _labels _via saddr _caddr; do
  [ "$id" = "test" ] && continue
  [ -n "$want_stage" ] && [ "$stage" != "$want_stage" ] && continue
  [ -n "$want_rail" ] && [ "$rail" != "$want_rail" ] && continue
  if [ "$stage/$rail/$wave" != "$current" ]; then
    wait
    current="$stage/$rail/$wave"
    slot=0
    echo "== ib $stage rail ${rail:--} wave $wave"
  fi
  run_test "$id" "$server" "$sdev" "$client" "$cdev" $((18515 + slot)) "${saddr:-}" &
  slot=$((slot + 1))
  if [ "$slot" -ge "$PARALLEL" ]; then
    wait
    slot=0
  fi
done <"$plan"
wait
echo "done; check with: snc check-results $(dirname "$here") $results"
