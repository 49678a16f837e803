#!/usr/bin/env bash
# Stop a control plane started with start.sh DIR: SIGTERM to each process named in DIR/*.pid, SIGKILL after 10 s, and
# return once they are gone (at most 5 s after the SIGKILL).
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
kill -9 $pids 2>/dev/null
# SIGKILL is not instant either (a process in the middle of exiting, or in uninterruptible I/O): wait up to 5 s more.
for _ in $(seq 50); do running || exit 0; sleep 0.1; done
exit 0
