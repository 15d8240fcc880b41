#!/bin/sh
# run.sh: everything GPU-related, in one go, on a machine with at least one GPU
# (a one-GPU machine is enough; under 5 minutes): build, the transport-independent
# suites with ACCELCTL_TRANSPORT=nccl, barrier latency over NCCL against Redis, and
# "accelctl check"; the figures are printed at the end (for README and the notes).
#
#   sh tests/gpu/run.sh [BUILD-DIR]        (default build-gpu; needs no network)
#
# With one GPU two simulated nodes cannot share a communicator (NCCL refuses a
# duplicate GPU): there NCCL is measured on a one-node job (a one-rank
# communicator, ACCELCTL_TRANSPORT=nccl: NCCL's copy path, no transport), and the
# two-node run shows the fallback to Redis. Every step is bounded (timeout 90,
# ctest --timeout 120, ACCELCTL_TIMEOUT=60s), so a hang costs a step, not the
# machine's time; the logs are copied to ${OUT:-/tmp/accelctl-gpu} at exit.
# Exit status: 0 when every step passed, else 1.
set -u
cd "$(dirname "$0")/../.."
src=$PWD
build=${1:-build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
failed=""
figures=""
logs=${OUT:-/tmp/accelctl-gpu}
fig() { figures="$figures$*
"; echo "  $*"; }
step() { echo; echo "== $*"; }
# T CMD...: one step, bounded; 124 when it ran out of time.
T() { timeout -k 5 90 "$@"; }
cleanup() {
	redis-cli -s "$sock" shutdown nosave >/dev/null 2>&1
	# The logs (ours, the helpers', Redis's) outlive the work directory.
	mkdir -p "$logs" 2>/dev/null &&
		(cd "$work" && find . -name '*.log' -type f | while read -r f; do
			d=$logs/$(dirname "$f"); mkdir -p "$d" && cp "$f" "$d/"; done)
	rm -rf "$work"
}
trap cleanup EXIT
work=$(mktemp -d)
sock=$work/redis.sock
# Everything the steps leave in TMPDIR (helpers' launch directories, NCCL's
# files) goes with the work directory.
TMPDIR=$work; export TMPDIR
# No wait of any step may outlive the step's own bound.
ACCELCTL_TIMEOUT=60s; export ACCELCTL_TIMEOUT
t0=$(date +%s)

step "preflight"
missing=""
for t in cmake cc redis-server redis-cli pkg-config nvidia-smi timeout; do
	command -v "$t" >/dev/null || missing="$missing $t"
done
[ -f /usr/share/shunit2/shunit2 ] || command -v shunit2 >/dev/null || missing="$missing shunit2"
pkg-config --exists hiredis 2>/dev/null || missing="$missing hiredis(pkg-config)"
nccl_h=""
for d in ${NCCL_ROOT:+"$NCCL_ROOT/include"} /usr/local/cuda/include /usr/include; do
	[ -f "$d/nccl.h" ] && nccl_h=$d/nccl.h && break
done
[ -n "$nccl_h" ] || missing="$missing nccl.h"
if [ -n "$missing" ]; then
	echo "missing:$missing"
	echo "install them (tests/deps.sh) and run again: nothing measured"
	exit 1
fi
echo "  all there (NCCL header: $nccl_h)"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)

step "what this machine has"
T nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader

step "build ($build)"
if ! { T cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/cmake.log" 2>&1 &&
	timeout -k 5 180 cmake --build "$build" -j "$jobs" >>"$work/cmake.log" 2>&1; }; then
	tail -30 "$work/cmake.log"; echo "build failed"; exit 1
fi
grep -E "NCCL|CUDA" "$work/cmake.log" | sed 's/^-- */  /'
acc=$(cd "$build" && pwd)/accelctl
PATH=$(dirname "$acc"):$PATH; export PATH
"$acc" --version | sed 's/^/  /'
fig "accelctl linked libraries: $(ldd "$acc" | awk '{ print $1 }' | grep -v vdso | tr '\n' ' ')"
info=$(ACCELCTL_TRANSPORT=nccl ACCELCTL_WORLD_SIZE=2 ACCELCTL_RANK=0 ACCELCTL_LOCAL_RANK=0 \
	ACCELCTL_LOCAL_WORLD_SIZE=2 T "$acc" info | grep '^transport')
echo "  forced: $info"
case $info in *" nccl ("*) ;; *)
	echo "no GPU visible to accelctl (NVIDIA driver: ${driver:-none found}): nothing to run here"
	exit 1 ;;
esac

step "ctest: the suites with ACCELCTL_TRANSPORT=nccl (label gpu), the link test, sh.transport"
s=$(date +%s)
(cd "$build" && timeout -k 5 240 ctest -L gpu -j 4 --timeout 120 --output-on-failure) \
	>"$work/ctest-gpu.log" 2>&1 || failed="$failed ctest-gpu"
(cd "$build" && T ctest -R '^(c\.nccl_link|c\.transport|sh\.transport)$' --timeout 80 \
	--output-on-failure) >"$work/ctest-other.log" 2>&1 || failed="$failed ctest-transport"
grep -hE "Test +#|tests passed|Not Run" "$work/ctest-gpu.log" "$work/ctest-other.log" | sed 's/^/  /'
case $failed in *ctest*) grep -hA30 "Failed\|ASSERT" "$work"/ctest-*.log | head -80 ;; esac
fig "gpu suites with ACCELCTL_TRANSPORT=nccl: $(grep -h 'tests passed' "$work/ctest-gpu.log") ($(( $(date +%s) - s ))s)"

step "barrier latency: last arrival to last release, 300 barriers each (bench_latency)"
T redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 --save '' --appendonly no \
	--daemonize yes --logfile "$work/redis.log" --dir "$work" >/dev/null
i=0; until redis-cli -s "$sock" ping >/dev/null 2>&1 || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
nlat=0
lat() { # lat NAME NODES RANKS VAR=VALUE...
	local name=$1 n=$2 k=$3 d; shift 3
	nlat=$((nlat + 1))
	d=$work/lat$nlat; mkdir -m 700 "$d"
	r=$(T env ACCELCTL_JOB_ID="lat$nlat-$$" ACCELCTL_HELPER_IDLE=20s "$@" \
		"$build/tests/bench_latency" "$n" "$k" 300 "$d" 2>"$d/err") || { r="failed: $(tail -1 "$d/err")"; failed="$failed latency$nlat"; }
	fig "$(printf '%-44s median/p99 us: %s' "$name ($n node x $k ranks)" "$r")"
	cat "$d"/node*/*.log 2>/dev/null | grep -E "NCCL|communicator" | sed 's/^[^ ]* /    log: /' | sort -u | head -4
}
lat "local, no transport" 1 4
lat "nccl forced, 1-rank comm: NCCL's copy path, no transport" 1 4 ACCELCTL_TRANSPORT=nccl
lat "ACCELCTL_TRANSPORT=redis" 2 2 ACCELCTL_TRANSPORT=redis ACCELCTL_RENDEZVOUS="unix://$sock"
# NCCL refuses two ranks on one GPU: this is the fallback to Redis, measured.
lat "nccl forced, 2 nodes on 1 GPU: the Redis fallback" 2 2 ACCELCTL_TRANSPORT=nccl ACCELCTL_RENDEZVOUS="unix://$sock"

step "broadcast of 1 MiB over a 1-rank NCCL communicator (one node, forced) is intact"
head -c 1048576 /dev/urandom >"$work/in"
ACCELCTL_TRANSPORT=nccl T "$acc" launch -n 2 -- sh -c '
	if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast big <"$0/in"; else accelctl broadcast big </dev/null; fi >"$0/out.$ACCELCTL_RANK"
	accelctl status | grep transport >"$0/transport.$ACCELCTL_RANK"' "$work" 2>"$work/bc.err"
if cmp -s "$work/in" "$work/out.1"; then fig "broadcast 1 MiB, 1-rank NCCL communicator (NCCL's copy path, no transport): intact ($(cat "$work/transport.0"))"
else fig "broadcast 1 MiB, 1-rank NCCL communicator: FAILED $(cat "$work/bc.err")"; failed="$failed broadcast"; fi

step "accelctl check"
# The status is check's, not a pipeline's (no pipefail in sh): output first.
T "$acc" check >"$work/check1" 2>&1
rc=$?; sed 's/^/  /' "$work/check1"
[ $rc = 0 ] || failed="$failed check"
fig "check, one process (a 1-rank communicator: a device-to-device copy, no transport): exit $rc: $(tail -1 "$work/check1")"
s=$(date +%s%N)
T "$acc" launch -n 2 -- accelctl check --min-busbw 0.001 --max-size 64M >"$work/check2" 2>&1
rc=$?; fig "check in a 2-rank job, --min-busbw 0.001: exit $rc (expected 0) in $(( ($(date +%s%N) - s) / 1000000 )) ms"
[ $rc = 0 ] || { failed="$failed check-job"; cat "$work/check2"; }
T "$acc" check --min-busbw 1000000 --max-size 1M >/dev/null 2>"$work/check3"
rc=$?; fig "check --min-busbw 1000000: exit $rc (expected 1): $(cat "$work/check3")"
[ $rc = 1 ] || failed="$failed check-min-busbw"

step "figures ($(( $(date +%s) - t0 ))s in all)"
printf '%s' "$figures"
if [ -n "$failed" ]; then echo "FAILED:$failed"; exit 1; fi
echo "all GPU steps passed"
