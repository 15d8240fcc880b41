#!/bin/sh
# suite.sh SUITE: run a transport-independent shunit2 suite with every accelctl call
# under ACCELCTL_TRANSPORT=nccl (ctest's gpu.* tests). Exits 77, which ctest reports
# as "Not Run" (never "Passed"), where NCCL is not compiled in or no GPU is visible.
: "${ACCELCTL:?set ACCELCTL to the accelctl binary}"
probe=$(env ACCELCTL_TRANSPORT=nccl ACCELCTL_WORLD_SIZE=2 ACCELCTL_RANK=0 \
	ACCELCTL_LOCAL_RANK=0 ACCELCTL_LOCAL_WORLD_SIZE=2 "$ACCELCTL" info 2>&1 | grep '^transport')
case $probe in
*" nccl ("*) ;;
*) echo "no NCCL transport here, not run: ${probe:-no transport line}" >&2; exit 77 ;;
esac
ACCELCTL_TEST_TRANSPORT=nccl exec bash "$1"
