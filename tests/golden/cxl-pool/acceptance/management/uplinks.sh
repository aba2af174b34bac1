#!/usr/bin/env bash
# Management uplink acceptance of cxl-pool, written by snc from the design: each of the
# 4 uplinks of 2 management switches to the aggregation layer (uplinks.tsv: one per line,
# its cable and label). Per uplink: both ends' state, negotiated speed and error counters, then
# COUNT pings over it (0 with an address to ping), then the counters again. An uplink that is down,
# below its line rate, counts errors under the pings or loses more than 0.0 % of them is a
# fault; `snc check-results` names it by cable label.
#
# Usage: uplinks.sh RESULTS_DIR
#   SSH (default ssh) runs a command on a switch (its Linux shell: SONiC, Cumulus); COUNT (default
#   100) pings per uplink.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:?usage: uplinks.sh RESULTS_DIR}
SSH=${SSH:-ssh}
COUNT=${COUNT:-100}
columns=11
mkdir -p "$results/management"

remote() {  # switch, then the command and its arguments, each quoted for the remote shell
  local host=$1
  shift
  $SSH "$host" "$(printf '%q ' "$@")"
}

# One interface's state, speed (Mb/s) and error counters as "key value" lines (the kernel's
# /sys/class/net view, the same on SONiC and Cumulus).
read_port() {  # switch interface
  # shellcheck disable=SC2016 # expanded by the switch's shell, not here
  remote "$1" sh -c 'cd "/sys/class/net/$1" || exit 1
for k in operstate speed statistics/rx_errors statistics/tx_errors statistics/rx_crc_errors; do
  printf "%s %s\n" "${k#statistics/}" "$(cat "$k" 2>/dev/null || echo -)"
done' sh "$2"
}

name_re='^[A-Za-z0-9][A-Za-z0-9_.:/-]*$'
addr_re='^[0-9A-Fa-f.:]+$'
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
    echo "uplinks.tsv:$lineno: ${#f[@]} fields, expected $columns; line skipped" >&2
    continue
  fi
  id=${f[0]} sw=${f[1]} port=${f[2]} peer=${f[3]} peer_port=${f[4]} target=${f[8]} bind=${f[9]}
  ok=1
  for v in "$id" "$sw" "$port" "$peer" "$peer_port"; do [[ $v =~ $name_re ]] || ok=0; done
  [ -z "$target" ] || [[ $target =~ $addr_re ]] || ok=0
  [ -z "$bind" ] || [[ $bind =~ $name_re ]] || ok=0
  if [ "$ok" != 1 ]; then
    echo "uplinks.tsv:$lineno: a test, switch, interface or address that is not plain; line skipped" >&2
    continue
  fi
  echo "== $id: $sw $port -> $peer $peer_port"
  {
    echo "== a before"
    read_port "$sw" "$port" 2>&1 || true
    echo "== b before"
    read_port "$peer" "$peer_port" 2>&1 || true
    echo "== ping"
    if [ -n "$target" ]; then
      if [ -n "$bind" ]; then
        remote "$sw" ping -c "$COUNT" -i 0.2 -W 1 -I "$bind" "$target" 2>&1 || true
      else
        remote "$sw" ping -c "$COUNT" -i 0.2 -W 1 "$target" 2>&1 || true
      fi
    fi
    echo "== a after"
    read_port "$sw" "$port" 2>&1 || true
    echo "== b after"
    read_port "$peer" "$peer_port" 2>&1 || true
  } >"$results/management/$id.txt"
done <"$here/uplinks.tsv"
echo "done; check with: snc check-results $(dirname "$here") $results"
