#!/bin/sh
# deps.sh: install the Debian packages accelctl needs that are missing (non-interactive).
#
#   sh tests/deps.sh build   what building needs
#   sh tests/deps.sh test    building and the whole test suite (clang and its
#                            libFuzzer runtime, only recommended by clang, for tests/fuzz;
#                            MPICH's Hydra and libpmix-dev, which Slurm's pmix plugin
#                            loads, for tests/integration; dpkg-dev and lintian for the
#                            package test; bash-builtins, whose loadable sleep
#                            tests/sh/bashenv gives every test's bash; bubblewrap,
#                            the private /tmp of tests/sh/t_private_tmp.sh)
#   sh tests/deps.sh bench   the benchmarks under tests/bench
#
# Only missing packages are installed, so a second run costs one dpkg query.
set -eu

build="cmake gcc make libc6-dev pkg-config libhiredis-dev libcurl4-openssl-dev libjansson-dev"
test="$build shunit2 bash-builtins valgrind mandoc man-db bash-completion zsh fish python3 procps iproute2 redis-server redis-tools
	redis-sentinel etcd-server etcd-client openssl openmpi-bin slurm-wlm munge python3-torch clang libclang-rt-14-dev
	mpich libpmix-dev dpkg-dev lintian bubblewrap"
bench="$build hyperfine time python3 redis-server redis-tools etcd-server"

case ${1:-test} in
build) want=$build ;;
test) want=$test ;;
bench) want=$bench ;;
*) echo "usage: sh tests/deps.sh build|test|bench" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

echo "deps.sh: installing:$missing" >&2
sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "deps.sh: run as root, or install:$missing" >&2; exit 1; }
	sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
# apt says little at -qq, and an install of python3-torch takes minutes on a
# fresh machine: a line every 30 s says it is still at it (never silent).
t0=$(date +%s)
log=$(mktemp)
(
	$sudo apt-get update -qq &&
	# shellcheck disable=SC2086
	$sudo apt-get install -y -qq --no-install-recommends $missing
) >"$log" 2>&1 &
pid=$!
n=0
while kill -0 "$pid" 2>/dev/null; do
	sleep 1
	n=$((n + 1))
	[ $((n % 30)) = 0 ] && echo "deps.sh: ... still installing ($n s; $(grep -c '^Setting up' "$log") packages set up so far)" >&2
done
if ! wait "$pid"; then
	tail -n 30 "$log" >&2
	echo "deps.sh: apt-get failed" >&2
	rm -f "$log"
	exit 1
fi
echo "deps.sh: installed $(grep -c '^Setting up' "$log") packages in $(($(date +%s) - t0)) s" >&2
rm -f "$log"
