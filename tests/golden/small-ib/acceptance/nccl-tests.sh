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
exports=()
if [ -n "${NCCL_ENV_FILE:-}" ]; then
  while IFS= read -r line; do
    case "$line" in ''|'#'*) ;; *) exports+=(-x "$line") ;; esac
  done <"$NCCL_ENV_FILE"
fi
mkdir -p "$results/nccl"
while IFS=$'\t' read -r run stage group coll hosts np per_host env _busbw _min _basis _algorithm _knee tool; do
  [ "$run" = "run" ] && continue
  [ -n "$want_stage" ] && [ "$stage" != "$want_stage" ] && continue
  case "$tool" in
    nccl-tests) bin=${NCCL_TESTS:+$NCCL_TESTS/} ;;
    rccl-tests) bin=${RCCL_TESTS:+$RCCL_TESTS/} ;;
    *) echo "== $run: no collective test is known for these accelerators; skipped"; continue ;;
  esac
  where=()
  case "$hosts" in
    host:*) where=(-H "${hosts#host:}:$per_host") ;;
    *) where=(--hostfile "$here/$hosts" --map-by "ppr:$per_host:node") ;;
  esac
  extra=()
  IFS=';' read -ra pairs <<<"$env"
  for kv in "${pairs[@]}"; do [ -n "$kv" ] && extra+=(-x "$kv"); done
  echo "== $run ($np ranks)"
  "$MPIRUN" -np "$np" "${where[@]}" "${exports[@]}" "${extra[@]}" \
    "${bin}${coll}_perf" -b 8 -e 8G -f 2 -g 1 >"$results/nccl/$run.txt" 2>&1 || true
done <"$here/nccl-tests.tsv"
echo "done; check with: snc check-results $here $results"
