#!/usr/bin/env bash
# Same-bytes proof for a change meant to leave every output as it was: render every shipped
# blueprint and tests/data design with the code of two trees and compare.
#
#   git worktree add --detach /tmp/base main      # the tree before the change
#   bench/same_bytes.sh /tmp/base /tmp/sb-base
#   bench/same_bytes.sh "$PWD" /tmp/sb-new
#   diff -r -x MANIFEST.json /tmp/sb-base /tmp/sb-new
#
# Each render runs from TREE itself: `python -m` puts the working directory ahead of PYTHONPATH,
# so a render started elsewhere (this checkout, with snc installed editable) would import that
# code instead, and the two sides would be one tree compared with itself. Extra arguments are
# renderer names (--only). The designs are always this checkout's.
set -u
tree=$(cd "$1" && pwd)
out=$2
shift 2
designs=$(cd "$(dirname "$0")/.." && pwd)
only=()
for r in "$@"; do only+=(--only "$r"); done
mkdir -p "$out"
: >"$out/rc.txt"
python=${PYTHON:-python3}
cd "$tree" || exit 2
"$python" -c "import supernodeiac, sys; p = supernodeiac.__file__; sys.exit(0 if p.startswith('$tree/') else f'imports {p}, not $tree')" || exit 2
for bp in "$designs"/blueprints/*.yaml "$designs"/tests/data/*.yaml; do
  n=$(basename "$bp" .yaml)
  PYTHONPATH=$tree "$python" -m supernodeiac render -q --force "${only[@]}" "$bp" -o "$out/$n" >/dev/null 2>"$out/$n.err"
  echo "$n rc=$?" >>"$out/rc.txt"
done
