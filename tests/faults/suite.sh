#!/bin/bash
# suite.sh NNODES SUITE: run a transport-independent shunit2 suite across NNODES
# simulated nodes through a private redis-server (ctest's faults.recovery and
# the like), as tests/etcd/suite.sh does through etcd: every "launch -n N" of
# the suite runs as "--nnodes NNODES -n N/NNODES" with ACCELCTL_RENDEZVOUS set
# (tests/sh/lib.sh). Exits 77 (ctest: Not Run) where redis-server is missing.
: "${ACCELCTL:?set ACCELCTL to the accelctl binary}"
command -v redis-server >/dev/null || { echo "redis-server not installed: not run" >&2; exit 77; }
nnodes=$1 suite=$2
SHUNIT_TMPDIR=$(mktemp -d) || exit 1
: "${ACCELCTL_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
# lib.sh: scratch, skip_suite and the waits redis.sh uses. The server is this
# shell's child: ctest's kill of the test on its TIMEOUT takes it too.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/redis.sh"
trap 'redis_kill; rm -rf "$SHUNIT_TMPDIR"' EXIT
redis_start	# ends this script (exit 1, with the server's log) when it does not answer
export ACCELCTL_TEST_RENDEZVOUS=redis://127.0.0.1:$REDIS_PORT ACCELCTL_TEST_NNODES=$nnodes
export ACCELCTL_TEST_SKIP=${REDIS_SKIP:-}
# A command that makes the store lose every key (t_recovery.sh).
export ACCELCTL_TEST_LOSE="redis-cli -s $REDIS_SOCK flushall"
SHUNIT_TMPDIR= bash "$suite"
