#!/usr/bin/env bash
# Scale-up link acceptance of small-ib, written by snc from the design: on each of the 16 hosts
# of the scale-up domains, the accelerator vendor's link check (scaleup.tsv: one host per line,
# the links per accelerator and the per-link rate each must show).
#   nvidia-smi: 16 hosts in 16 domains (H100; 18 x 25 GB/s per accelerator)
#
# Usage: scaleup.sh RESULTS_DIR before|after
#   Run it with "before", then the domain stage of nccl-tests.sh (the traffic), then with "after":
#   `snc check-results` reads the link state from the last and compares the error counters.
#   SSH (default ssh) runs a command on a host; PARALLEL (default 64) hosts at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:?usage: scaleup.sh RESULTS_DIR before|after}
phase=${2:?usage: scaleup.sh RESULTS_DIR before|after}
case "$phase" in before|after) ;; *) echo "phase must be before or after" >&2; exit 2 ;; esac
SSH=${SSH:-ssh}
PARALLEL=${PARALLEL:-64}
columns=9
mkdir -p "$results/scaleup"

remote() {  # host, then the command and its arguments, each quoted for the remote shell
  local host=$1
  shift
  $SSH "$host" "$(printf '%q ' "$@")"
}

name_re='^[A-Za-z0-9][A-Za-z0-9_.:-]*$'
lineno=0
slot=0
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
    echo "scaleup.tsv:$lineno: ${#f[@]} fields, expected $columns; line skipped" >&2
    continue
  fi
  id=${f[0]} host=${f[2]} tool=${f[4]}
  if ! [[ $id =~ $name_re && $host =~ $name_re ]]; then
    echo "scaleup.tsv:$lineno: a check or host that is not a plain name; line skipped" >&2
    continue
  fi
  out="$results/scaleup/$id.$phase.txt"
  case "$tool" in
    nvidia-smi)
      {
        echo "== status"
        remote "$host" nvidia-smi nvlink -s 2>&1 || true
        echo "== errors"
        remote "$host" nvidia-smi nvlink -e 2>&1 || true
      } >"$out" &
      ;;
    amd-smi)
      {
        echo "== xgmi"
        remote "$host" amd-smi xgmi 2>&1 || true
      } >"$out" &
      ;;
    *)
      echo "== $id: no link check is known for these accelerators; skipped"
      continue
      ;;
  esac
  slot=$((slot + 1))
  if [ "$slot" -ge "$PARALLEL" ]; then
    wait
    slot=0
  fi
done <"$here/scaleup.tsv"
wait
echo "done; check with: snc check-results $here $results"
