#!/usr/bin/env bash
# nccl-tests acceptance of small-ib, written by snc from the design: all_reduce, all_gather
# and alltoall per scale-up domain, per rail and across each fabric (nccl-tests.tsv: one run per
# line with the design's bus bandwidth and the pass threshold; `snc check-results` compares).
#
# Usage: nccl-tests.sh RESULTS_DIR [STAGE]      STAGE: domain, rail or fabric (default: all)
#   MPIRUN (default mpirun, Open MPI syntax), NCCL_TESTS / RCCL_TESTS (folder of the nccl-tests or
#   rccl-tests *_perf binaries, by the run's tool column; default: found on PATH), NCCL_ENV_FILE (an nccl/<model>.env of this design: its settings are exported
#   to every rank).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:?usage: nccl-tests.sh RESULTS_DIR [STAGE]}
want_stage=${2:-}
MPIRUN=${MPIRUN:-mpirun}
max_bytes=8G

key_re='^[A-Z_][A-Z0-9_]*$'
# A value as the env file writes it: one plain word, or one single-quoted word.
plain_re='^[A-Za-z0-9_@%+=:,./-]*$'
quoted_re="^'([^']*)'$"
exports=()
if [ -n "${NCCL_ENV_FILE:-}" ]; then
  # Only KEY=value assignments reach mpirun, each one argument of -x; any other line is refused.
  n=0
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    case "$line" in ''|'#'*) continue ;; esac
    key=${line%%=*}
    value=${line#*=}
    if [ "$key" = "$line" ] || ! [[ $key =~ $key_re ]]; then
      echo "$NCCL_ENV_FILE:$n: not a KEY=value line; refused" >&2
      exit 2
    fi
    if [[ $value =~ $quoted_re ]]; then
      value=${BASH_REMATCH[1]}
    elif ! [[ $value =~ $plain_re ]]; then
      echo "$NCCL_ENV_FILE:$n: the value of $key is not one shell word; refused" >&2
      exit 2
    fi
    exports+=(-x "$key=$value")
  done <"$NCCL_ENV_FILE"
fi
name_re='^[A-Za-z0-9][A-Za-z0-9_.:-]*$'
hostfile_re='^hosts/[A-Za-z0-9][A-Za-z0-9_.-]*\.txt$'
mkdir -p "$results/nccl"
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
  lineno=$((lineno + 1))
  [ "$lineno" = 1 ] && continue
  # Split on exactly the tabs (bash's read merges a run of tabs: an empty env cell made the
  # design busbw the next field, passed to mpirun -x as a variable name).
  f=()
  rest=$line
  while [[ $rest == *$'\t'* ]]; do
    f+=("${rest%%$'\t'*}")
    rest=${rest#*$'\t'}
  done
  f+=("$rest")
  if [ "${#f[@]}" != 14 ]; then
    echo "nccl-tests.tsv:$lineno: ${#f[@]} fields, expected 14; line skipped" >&2
    continue
  fi
  run=${f[0]} stage=${f[1]} coll=${f[3]} hosts=${f[4]} np=${f[5]} per_host=${f[6]} env=${f[7]} tool=${f[13]}
  [ -n "$want_stage" ] && [ "$stage" != "$want_stage" ] && continue
  case "$tool" in
    nccl-tests) bin=${NCCL_TESTS:+$NCCL_TESTS/} ;;
    rccl-tests) bin=${RCCL_TESTS:+$RCCL_TESTS/} ;;
    *) echo "== $run: no collective test is known for these accelerators; skipped"; continue ;;
  esac
  where=()
  case "$hosts" in
    host:*) [[ ${hosts#host:} =~ $name_re ]] && where=(-H "${hosts#host:}:$per_host") ;;
    *) [[ $hosts =~ $hostfile_re ]] && where=(--hostfile "$here/$hosts" --map-by "ppr:$per_host:node") ;;
  esac
  extra=()
  ok=1
  IFS=';' read -ra pairs <<<"$env"
  for kv in "${pairs[@]}"; do
    [ -n "$kv" ] || continue
    [[ ${kv%%=*} =~ $key_re && $kv == *=* && ${kv#*=} =~ $plain_re ]] || ok=0
    extra+=(-x "$kv")
  done
  if [ "$ok" != 1 ] || [ "${#where[@]}" = 0 ] || ! [[ $run =~ $name_re && $coll =~ ^[a-z_]+$ && $np =~ ^[1-9][0-9]*$ && $per_host =~ ^[1-9][0-9]*$ ]]; then
    echo "nccl-tests.tsv:$lineno: a run, host, collective, count or KEY=value pair that is not plain; line skipped" >&2
    continue
  fi
  echo "== $run ($np ranks)"
  "$MPIRUN" -np "$np" "${where[@]}" "${exports[@]}" "${extra[@]}" \
    "${bin}${coll}_perf" -b 8 -e "$max_bytes" -f 2 -g 1 >"$results/nccl/$run.txt" 2>&1 || true
done <"$here/nccl-tests.tsv"
echo "done; check with: snc check-results $here $results"
