#!/bin/sh
# debsrc.sh: fetch and unpack one Debian 13 "trixie" source package, verified, without
# touching /etc/apt; shared by tests/hiredis.sh and tests/valkey.sh, which build from it.
#
#   sh tests/debsrc.sh [--orig-ok] PACKAGE DIR    as root (or with sudo) on Debian 12
#
# Prints the unpacked source tree (DIR/src/PACKAGE-VERSION) on stdout; messages go to
# stderr. DIR/src is emptied first. --orig-ok: when the archive lists files it cannot
# serve (a mirror whose pool lags its index answers 404 for a new .dsc), fall back to the
# upstream tarball alone, checked against the same signed index, without Debian's
# patches; a note on stderr says so. apt runs with a private configuration (sources list,
# lists, cache) under DIR/apt. Installs dpkg-dev, xz-utils and debian-archive-keyring,
# and make, gcc and libc6-dev for the build that follows, through the normal apt when
# they are missing.
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
orig_ok=0
[ "${1:-}" = --orig-ok ] && { orig_ok=1; shift; }
{ [ $# = 2 ] && [ -n "$1" ] && [ -n "$2" ]; } || { echo "usage: sh tests/debsrc.sh [--orig-ok] PACKAGE DIR" >&2; exit 2; }
pkg=$1
suite=trixie
mkdir -p "$2"
top=$(cd "$2" && pwd)
say() { echo "debsrc.sh: $*" >&2; }

# Debian packages this needs (dpkg-source, .xz tarballs, the keys), installed through
# the normal apt as tests/deps.sh does. The caller may already have run apt-get update
# (DEBSRC_UPDATED=1) so that it is not done twice.
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
updated=${DEBSRC_UPDATED:-0}
missing=""
for p in dpkg-dev xz-utils debian-archive-keyring make gcc libc6-dev; do
	case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
if [ -n "$missing" ]; then
	say "installing:$missing"
	[ "$updated" = 1 ] || $sudo apt-get update -qq
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
say "fetching $pkg from $suite ($uri)"
$sudo apt-get "$@" -qq update
src=$top/src
rm -rf "$src"
mkdir -p "$src"
# apt downloads as its unprivileged _apt user where that user can write.
if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
	chown _apt "$src"
fi
if ! (cd "$src" && $sudo apt-get "$@" -qq source "$pkg" >/dev/null); then
	[ "$orig_ok" = 1 ] || exit 1
	# The upstream tarball as the signed index names it: 'URI' FILE SIZE SHA256:HASH.
	# apt checks a file's hash before it leaves partial/, and so does this again. (Asked
	# from $apt: apt leaves out the files the current directory already holds.)
	orig=$(cd "$apt" && $sudo apt-get "$@" -qq --print-uris source "$pkg" |
		awk '$2 ~ /\.orig\.tar\.[a-z0-9]+$/ && $4 ~ /^SHA256:/ { sub(/^SHA256:/, "", $4); print $2, $4; exit }')
	file=${orig%% *}
	{ [ -n "$orig" ] && [ -f "$src/$file" ]; } || { say "no upstream tarball of $pkg fetched either"; exit 1; }
	[ "$(sha256sum "$src/$file" | cut -d ' ' -f 1)" = "${orig#* }" ] ||
		{ say "$file does not match $suite's signed Sources index"; exit 1; }
	say "NOTE: $pkg's Debian files could not be fetched (above); using $file alone," \
		"verified against $suite's signed index, WITHOUT Debian's patches"
	tar -C "$src" -xf "$src/$file"
fi
dir=$(find "$src" -mindepth 1 -maxdepth 1 -type d -name "$pkg-*" | head -n 1)
[ -n "$dir" ] || { say "apt-get source $pkg left no $pkg-* directory in $src"; exit 1; }
echo "$dir"
