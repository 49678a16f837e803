#!/usr/bin/env bash
# Stop a control plane started with start.sh DIR: SIGTERM to each process named in DIR/*.pid, SIGKILL after 10 s.
# An exited process whose parent has not reaped it yet (a zombie) counts as stopped.
set -uo pipefail
DIR=${1:?usage: stop.sh DIR}
pids=$(cat "$DIR"/kcm.pid "$DIR"/kas.pid "$DIR"/etcd.pid 2>/dev/null)
[ -n "$pids" ] || exit 0
running() {
  for pid in $pids; do
    [ -r "/proc/$pid/stat" ] && [ "$(sed 's/^.*) //' "/proc/$pid/stat" | cut -c1)" != Z ] && return 0
  done
  return 1
}
kill $pids 2>/dev/null
for _ in $(seq 100); do running || exit 0; sleep 0.1; done
kill -9 $pids 2>/dev/null; exit 0
