#!/usr/bin/env bash
# Physical-layer acceptance of fabric ib (small-ib), stage 0: run it before perftest.sh.
# Written by snc from the design. physical.tsv lists the 776 ends of the fabric's 388 cabled data
# links: per end the part that belongs in its cage (from the bill of materials) and the limits its
# readings must meet (pre- and post-FEC BER, symbol errors, link-downs, Rx power, module temperature).
# This script only reads the ports; `snc check-results` compares the readings and names each failing
# cable by its label and printed ports.
#
#   132 host NIC ports: mlxlink -d <rdma device> -p 1 -m -c -e --json, on the host
#   644 switch ports: one ibdiagnet run (--get_cable_info --get_phy_info), its
#        ibdiagnet2.db_csv / .pm / .cables copied back from IBDIAG_HOST
#
# Usage: physical.sh RESULTS_DIR
#   SSH (default ssh) runs a command on a host or switch; PARALLEL (default 32) mlxlink reads at once.
#   IBDIAG_HOST (default: the first host in physical.tsv) runs ibdiagnet; PM_PAUSE (default 60)
#   seconds ibdiagnet waits between its two PM counter reads (errors counted during the pause);
#   IBDIAG_DIR (default /tmp/snc-ibdiagnet-<fabric>) its output folder on that host.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:?usage: physical.sh RESULTS_DIR}
SSH=${SSH:-ssh}
PARALLEL=${PARALLEL:-32}
fabric='ib'
columns=24
out="$results/physical/$fabric"
mkdir -p "$out/mlxlink" "$out/ibdiagnet"

# A plan value becomes one argument of a remote command, whatever it holds: ssh joins its
# arguments into one line for the remote shell, so every word is quoted for that shell here.
remote() {  # host, then the command and its arguments
  local host=$1
  shift
  $SSH "$host" "$(printf '%q ' "$@")"
}

read_nic() {  # host rdma_device
  local host=$1 dev=$2
  remote "$host" mlxlink -d "$dev" -p 1 -m -c -e --json >"$out/mlxlink/$host.$dev.json" 2>"$out/mlxlink/$host.$dev.err" || true
}


# What a field handed to a host may look like: a name (never an option, a path or shell text);
# a line with anything else is refused, not run.
name_re='^[A-Za-z0-9][A-Za-z0-9_.:-]*$'

first_host=""
slot=0
lineno=0
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
    echo "physical.tsv:$lineno: ${#f[@]} fields, expected $columns; line skipped" >&2
    continue
  fi
  device=${f[3]} tool=${f[4]} port=${f[5]}
  if ! [[ $device =~ $name_re ]] || { [ "$tool" = mlxlink ] && ! [[ $port =~ $name_re ]]; }; then
    echo "physical.tsv:$lineno: a device or port that is not a plain name; line skipped" >&2
    continue
  fi
  case $tool in
    mlxlink)
      [ -n "$first_host" ] || first_host=$device
      read_nic "$device" "$port" &
      slot=$((slot + 1))
      if [ "$slot" -ge "$PARALLEL" ]; then
        wait
        slot=0
      fi
      ;;
    ibdiagnet) ;;

    *) echo "physical.tsv:$lineno: unknown tool; line skipped" >&2 ;;
  esac
done <"$here/physical.tsv"
wait

host=${IBDIAG_HOST:-$first_host}
if ! [[ $host =~ $name_re ]]; then
  echo "physical.sh: IBDIAG_HOST must be a host name" >&2
  exit 2
fi
remote_dir=${IBDIAG_DIR:-/tmp/snc-ibdiagnet-$fabric}
echo "== $fabric ibdiagnet on $host"
remote "$host" ibdiagnet -o "$remote_dir" --get_cable_info --get_phy_info --pm_pause_time "${PM_PAUSE:-60}" \
  >"$out/ibdiagnet/run.txt" 2>&1 || true
remote "$host" tar -C "$remote_dir" -cf - . | tar -C "$out/ibdiagnet" -xf - || true
echo "done; check with: snc check-results $(dirname "$here") $results"
