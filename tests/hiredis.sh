#!/bin/sh
# hiredis.sh: build hiredis 1.2.0 (the source package of Debian 13 "trixie") into
# build-hiredis1/prefix, so that CI can build and test accelctl against hiredis 1.x as
# well as against the 0.14 that Debian 12 ships (tests/check.sh, build-hiredis1).
#
#   sh tests/hiredis.sh [DIR]    as root on Debian 12; DIR defaults to build-hiredis1
#
# Prints the prefix on stdout (use it as -DACCELCTL_HIREDIS_PREFIX=...). Idempotent: when
# the prefix already holds 1.2.0 it exits at once. Nothing under /etc/apt is touched: apt
# runs with a private configuration (sources list, lists, cache) under DIR/apt.
#
# Where the source comes from and why it can be trusted: tests/debsrc.sh, shared with
# tests/valkey.sh, fetches trixie's source package from the archive named by the
# machine's own apt configuration (or ACCELCTL_DEBIAN_MIRROR) and has apt verify it
# against trixie's signed index; verification is never turned off.
set -eu
cd "$(dirname "$0")/.."
want=1.2.0
suite=trixie
mkdir -p "${1:-build-hiredis1}"
top=$(cd "${1:-build-hiredis1}" && pwd)
prefix=$top/prefix
stamp=$prefix/.accelctl-hiredis-$want
jobs=$(nproc 2>/dev/null || echo 2)
say() { echo "hiredis.sh: $*" >&2; }

# The version a hiredis.h declares, as MAJOR.MINOR.PATCH.
header_version() {
	awk '$1 == "#define" && $2 ~ /^HIREDIS_(MAJOR|MINOR|PATCH)$/ { v[$2] = $3 }
		END { if (length(v) == 3) print v["HIREDIS_MAJOR"] "." v["HIREDIS_MINOR"] "." v["HIREDIS_PATCH"] }' "$1"
}

if [ -f "$stamp" ] && [ -f "$prefix/lib/libhiredis.a" ] &&
	[ "$(header_version "$prefix/include/hiredis/hiredis.h" 2>/dev/null)" = "$want" ]; then
	echo "$prefix"
	exit 0
fi

# trixie's source package, verified (tests/debsrc.sh says how), unpacked under $top/src;
# debsrc.sh installs what fetching it and a C build need.
dir=$(sh tests/debsrc.sh hiredis "$top")
got=$(header_version "$dir/hiredis.h" 2>/dev/null || true)
[ "$got" = "$want" ] || { say "$suite's hiredis is ${got:-unknown}, not $want"; exit 1; }

# Plain hiredis without TLS; both archives (accelctl links libhiredis.a). Its
# Makefile takes INCLUDE_PATH and LIBRARY_PATH from the environment (?=), where
# LIBRARY_PATH is often the linker's search path (CUDA's stubs): set them here,
# and keep them out of the compiler's environment. DESTDIR keeps a half-done
# install away from the prefix.
say "building hiredis $got"
unset INCLUDE_PATH LIBRARY_PATH PKGCONF_PATH CMAKE_PATH
set -- USE_SSL=0 PREFIX="$prefix" INCLUDE_PATH=include/hiredis LIBRARY_PATH=lib \
	PKGCONF_PATH=pkgconfig CMAKE_PATH=cmake/Hiredis
make -C "$dir" -s -j "$jobs" "$@" >/dev/null
rm -rf "$prefix" "$top/stage"
make -C "$dir" -s "$@" DESTDIR="$top/stage" install >/dev/null
mkdir -p "$(dirname "$prefix")"
mv "$top/stage$prefix" "$prefix"
rm -rf "$top/stage"
touch "$stamp"
echo "$prefix"
