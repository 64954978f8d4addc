#!/bin/sh
# bench-wake: see wake.py
b=${1:-build}; [ $# -gt 0 ] && shift
exec python3 "$(dirname "$0")/wake.py" "$b" "$@"
