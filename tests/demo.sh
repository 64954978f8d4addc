#!/bin/sh
# make run: a demo project with a generated ledger, read through the CLI.
#   sh tests/demo.sh DEMO_DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
demo=${1:-build/demo}
S="$top/build/sloptimize"
python3 "$top/../shared/bench/genledger.py" "$demo" --records 5000 --causes 120 >/dev/null
echo "demo project: $demo  (a generated ledger of 5,000 records)"
echo
"$S" report --project "$demo" || true
echo
"$S" issues --project "$demo" | head -n 12
