#!/bin/sh
# valkey.sh: build valkey-server and valkey-cli from the source package of Debian 13
# "trixie" into build-valkey/prefix, so that the Redis and fault suites can also run
# against Valkey, the Redis that distributions now ship (issue 20, 4c).
#
#   sh tests/valkey.sh [DIR]    as root on Debian 12; DIR defaults to build-valkey
#
# Prints the bin directory (DIR/prefix/bin) on stdout: valkey-server, valkey-cli,
# valkey-sentinel (the server under another name: it runs as a sentinel when so named),
# and redis-server, redis-cli, redis-sentinel as links to them (Valkey's own
# USE_REDIS_SYMLINKS), so that putting it first on PATH swaps the server under tests
# that call redis-server and redis-cli. Idempotent: when the prefix already holds a
# working build it exits at once.
#
# The source comes through tests/debsrc.sh (the archive named by the machine's own apt
# configuration, verified against trixie's signed index; nothing under /etc/apt is
# touched). Where the archive cannot serve the Debian files its index lists, the
# upstream tarball alone is used (debsrc.sh --orig-ok says so on stderr): this build is
# a server on loopback for tests, and the upstream Makefile builds it the same way.
set -eu
cd "$(dirname "$0")/.."
mkdir -p "${1:-build-valkey}"
top=$(cd "${1:-build-valkey}" && pwd)
prefix=$top/prefix
stamp=$prefix/.accelctl-valkey
jobs=$(nproc 2>/dev/null || echo 2)
say() { echo "valkey.sh: $*" >&2; }

# Done before: the stamp, and binaries that still run (a moved or half-removed
# prefix does not count).
if [ -f "$stamp" ] && "$prefix/bin/valkey-server" --version >/dev/null 2>&1 &&
	"$prefix/bin/redis-cli" --version >/dev/null 2>&1; then
	echo "$prefix/bin"
	exit 0
fi

# tests/debsrc.sh installs what fetching the source and a C build need. Valkey's deps/
# (Lua, hiredis, linenoise, hdr_histogram, fpconv) are built from the source tree, so
# a C compiler and make suffice; TLS, systemd and jemalloc are left out below, as
# they would need libssl-dev and libsystemd-dev and a test server wants none of them.

dir=$(sh tests/debsrc.sh --orig-ok valkey "$top")
{ [ -f "$dir/src/Makefile" ] && [ -f "$dir/src/server.c" ]; } ||
	{ say "$dir does not look like Valkey's source"; exit 1; }

# Valkey's own Makefile. MALLOC=libc: its bundled jemalloc would add minutes to the
# build and nothing to what the suites check. USE_SYSTEMD=no: otherwise it links
# libsystemd when pkg-config finds it. BUILD_TLS=no is its default, written out.
# The same settings go to the install step, which depends on "all" and would
# otherwise rebuild with the defaults. The log stays in DIR for a failed build.
# PREFIX points at a stage next to the prefix so that a half-done install never
# looks finished (the Makefile has no DESTDIR), then the stage is moved into place.
set -- BUILD_TLS=no USE_SYSTEMD=no MALLOC=libc USE_REDIS_SYMLINKS=yes
log=$top/build.log
say "building $(basename "$dir") (-j$jobs; log: $log)"
start=$(date +%s)
make -C "$dir" -j "$jobs" "$@" >"$log" 2>&1 || {
	tail -n 30 "$log" >&2
	say "make failed; the whole log is $log"
	exit 1
}
rm -rf "$prefix" "$top/stage"
make -C "$dir" "$@" PREFIX="$top/stage" install >>"$log" 2>&1 || {
	tail -n 30 "$log" >&2
	say "make install failed; the whole log is $log"
	exit 1
}
mv "$top/stage" "$prefix"
say "built in $(($(date +%s) - start)) s: $("$prefix/bin/valkey-server" --version)"

# What the tests rely on: the redis-* names exist and lead to Valkey.
for b in valkey-server valkey-cli valkey-sentinel redis-server redis-cli redis-sentinel; do
	[ -x "$prefix/bin/$b" ] || { say "the build made no $b"; exit 1; }
done
"$prefix/bin/valkey-server" --version >"$stamp"
echo "$prefix/bin"
