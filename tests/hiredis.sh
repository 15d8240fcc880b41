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
# Where the source comes from. The archive's address is not written here: it is taken
# from the machine's own apt configuration (the entry for this release's own suite,
# deb822 /etc/apt/sources.list.d/*.sources or one-line sources.list), or from
# ACCELCTL_DEBIAN_MIRROR, and the suite is replaced by trixie.
#
# Why the source can be trusted. apt verifies trixie's InRelease against the keyring
# named by that entry's Signed-By (else Debian's archive keyring); apt-get source then
# checks the .dsc, .orig and .debian files against the hashes of the signed Sources index
# (apt runs dpkg-source with --no-check because of that; the .dsc's own signature by its
# uploader would need debian-keyring, which is not needed for this chain). Debian 12's
# debian-archive-keyring has carried trixie's keys since 2023.3+deb12u1; an older one is
# upgraded first through the machine's normal (bookworm, already trusted) apt, so every
# key comes through a verified channel. Verification is never turned off: an unsigned or
# badly signed InRelease makes apt-get update fail, and so this script.
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

# Debian packages this needs, installed through the normal apt as tests/deps.sh does.
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
missing=""
for p in dpkg-dev make gcc libc6-dev xz-utils debian-archive-keyring; do
	case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
export DEBIAN_FRONTEND=noninteractive
updated=0
if [ -n "$missing" ]; then
	say "installing:$missing"
	$sudo apt-get update -qq
	updated=1
	# shellcheck disable=SC2086
	$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The archive of this release's own suite, from the machine's apt configuration.
# Prints "URI KEYRING" (KEYRING: the entry's Signed-By file, or empty).
# shellcheck disable=SC1091
self_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$self_suite" ] || { say "cannot tell this release's codename (/etc/os-release)"; exit 1; }
find_archive() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		# deb822: stanzas separated by blank lines; fields may continue on
		# indented lines (a keyring embedded in Signed-By), which we skip.
		awk -v want="$self_suite" '
			function flush() {
				if (enabled && uri != "" && types ~ /(^| )deb(-src)?( |$)/ &&
				    (" " suites " ") ~ (" " want " ")) {
					print uri, (key ~ /^\//) ? key : ""; found = 1; exit
				}
				uri = ""; suites = ""; types = ""; key = ""; enabled = 1
			}
			BEGIN { enabled = 1 }
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[ \t]/ { next }
			{
				name = tolower($1); sub(/:$/, "", name)
				val = $0; sub(/^[^:]*:[ \t]*/, "", val)
				if (name == "uris") { split(val, u, /[ \t]+/); uri = u[1] }
				else if (name == "suites") suites = val
				else if (name == "types") types = val
				else if (name == "signed-by") key = val
				else if (name == "enabled") enabled = (tolower(val) !~ /^no/)
			}
			END { if (!found) flush() }
		' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		# One-line style: deb [opts] URI SUITE COMPONENT...
		awk -v want="$self_suite" '
			$1 != "deb" && $1 != "deb-src" { next }
			{
				i = 2; key = ""
				if ($2 ~ /^\[/) {
					opts = ""
					for (; i <= NF; i++) { opts = opts " " $i; if ($i ~ /\]$/) break }
					i++
					if (match(opts, /signed-by=[^] ]+/))
						key = substr(opts, RSTART + 10, RLENGTH - 10)
				}
				if ($(i + 1) == want) { print $i, (key ~ /^\//) ? key : ""; exit }
			}
		' "$f"
	done
}
if [ -n "${ACCELCTL_DEBIAN_MIRROR:-}" ]; then
	uri=$ACCELCTL_DEBIAN_MIRROR
	keyring=""
else
	line=$(find_archive | head -n 1)
	uri=${line%% *}
	keyring=${line#"$uri"}
	keyring=${keyring# }
fi
[ -n "$uri" ] || {
	say "no apt source for suite $self_suite found in /etc/apt; set ACCELCTL_DEBIAN_MIRROR"
	exit 1
}
[ -n "$keyring" ] && [ -f "$keyring" ] || keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# trixie's keys: debian-archive-keyring ships one file per key set next to the
# combined keyring; without trixie's, upgrade the package through the trusted apt.
if [ ! -f /usr/share/keyrings/debian-archive-$suite-automatic.gpg ]; then
	say "debian-archive-keyring lacks $suite's keys: upgrading it"
	[ "$updated" = 1 ] || $sudo apt-get update -qq
	$sudo apt-get install -y -qq --only-upgrade debian-archive-keyring >/dev/null
	[ -f /usr/share/keyrings/debian-archive-$suite-automatic.gpg ] || {
		say "debian-archive-keyring $(dpkg-query -W -f='${Version}' debian-archive-keyring)" \
			"has no key for $suite; cannot verify its archive"
		exit 1
	}
fi

# The private apt: its own sources list and state; /etc/apt/apt.conf.d still
# applies (a proxy configured there is wanted here too).
apt=$top/apt
mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial"
echo "deb-src [signed-by=$keyring] $uri $suite main" >"$apt/sources.list"
set -- -o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts" \
	-o "Dir::Etc::PreferencesParts=$apt/parts" -o "Dir::Etc::Preferences=$apt/none" \
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" \
	-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
say "fetching hiredis from $suite ($uri)"
$sudo apt-get "$@" -qq update
src=$top/src
rm -rf "$src"
mkdir -p "$src"
# apt downloads as its unprivileged _apt user where that user can write.
if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
	chown _apt "$src"
fi
(cd "$src" && $sudo apt-get "$@" -qq source "hiredis" >/dev/null)
dir=$(find "$src" -mindepth 1 -maxdepth 1 -type d -name 'hiredis-*' | head -n 1)
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
