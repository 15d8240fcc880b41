#!/bin/bash
# suite.sh NNODES SUITE: run a transport-independent shunit2 suite across NNODES
# simulated nodes through a private etcd (ctest's etcd.* tests): every
# "launch -n N" of the suite runs as "--nnodes NNODES -n N/NNODES" with
# ACCELCTL_RENDEZVOUS=etcd://... (tests/sh/lib.sh). Exits 77 (ctest: Not Run)
# where etcd is not installed or this accelctl has no etcd support.
: "${ACCELCTL:?set ACCELCTL to the accelctl binary}"
"$ACCELCTL" --version | grep -q '^features:.* etcd=1' ||
	{ echo "accelctl built without etcd support: not run" >&2; exit 77; }
command -v etcd >/dev/null || { echo "etcd not installed (Debian: etcd-server): not run" >&2; exit 77; }
nnodes=$1 suite=$2
SHUNIT_TMPDIR=$(mktemp -d) || exit 1
: "${ACCELCTL_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
# lib.sh: scratch and the waits etcd.sh uses. The member is this shell's child:
# ctest's kill of the test on its TIMEOUT takes it too.
. "$(dirname "$0")/../sh/lib.sh"
. "$(dirname "$0")/../sh/etcd.sh"
trap 'etcd_stop; rm -rf "$SHUNIT_TMPDIR"' EXIT
etcd_start 1	# ends this script (exit 1, with etcd's log) when it does not answer
export ACCELCTL_TEST_RENDEZVOUS=$ETCD_URL ACCELCTL_TEST_NNODES=$nnodes
# Tests whose expected text names one node's layout (ETCD_SKIP, words).
export ACCELCTL_TEST_SKIP=${ETCD_SKIP:-}
# A command that makes the store lose every key (t_recovery.sh).
export ACCELCTL_TEST_LOSE="env ETCDCTL_API=3 etcdctl --endpoints http://${ETCD_ENDPOINTS%%,*} del --prefix accelctl/"
SHUNIT_TMPDIR= bash "$suite"
