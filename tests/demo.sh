#!/bin/sh
# make run: the daemon on a demo project, a bundled play session replayed
# into it, and `sloptimize watch` printing the wake lines an agent gets.
# Ctrl-C stops everything.
#
#   sh tests/demo.sh DEMO_DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
demo=${1:-build/demo}
B="$top/build"
rm -rf "$demo"
mkdir -p "$demo"
demo=$(cd "$demo" && pwd)
# the demo keeps its state beside it, away from real projects' state
export XDG_STATE_HOME="$demo/.state"

listen=127.0.0.1:7567
if (exec 3<>/dev/tcp/127.0.0.1/7567) 2>/dev/null; then
	listen=127.0.0.1:0	# 7567 is taken: any free port
fi
"$B/sloptimized" --project "$demo" --listen "$listen" 2>"$demo/daemon.log" &
daemon=$!
watch=""
trap 'kill $daemon $watch 2>/dev/null; wait 2>/dev/null; exit 0' INT TERM
trap 'kill $daemon $watch 2>/dev/null' EXIT

# wait for the daemon to record where it listens (10 s at most)
i=0
until state=$(ls -d "$XDG_STATE_HOME"/sloptimize/*/ 2>/dev/null) &&
    [ -s "$state/daemon.json" ]; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 $daemon 2>/dev/null; then
		echo "the daemon did not start:" >&2
		cat "$demo/daemon.log" >&2
		exit 1
	fi
	sleep 0.1
done
addr=$(sed -n 's/.*"listen":[^"]*"\([^"]*\)".*/\1/p' "$state/daemon.json")

echo "sloptimized is watching the demo project $demo"
echo "  panel:   http://$addr/"
echo "  its log: $demo/daemon.log"
echo "replaying a recorded play session; the agent's wake lines follow:"
echo
"$B/sloptimize" watch --project "$demo" &
watch=$!
"$B/sloptimize" replay "$top/tests/fixtures/sessions/demo.jsonl" \
    --project "$demo" --speed 2 >/dev/null
sleep 1
echo
"$B/sloptimize" report --project "$demo" || true
echo
echo "try: $B/sloptimize issues --project $demo"
echo "Ctrl-C to stop."
wait $daemon
