# t_layers.sh: the source's layers stay apart (issue 19): one fork, a leaf log, no store in the helper, no helper in a store.
. "$(dirname "$0")/lib.sh"

LIB=$ACCELCTL_SRC/lib

# code FILE...: the files without their comments (so that prose may name
# what code must not call).
code() { sed 's|//.*||' "$@" | perl -0pe 's|/\*.*?\*/||gs'; }

# includes FILE: the project headers FILE includes, one a line.
includes() { sed -n 's/^#include "\([^"]*\)".*/\1/p' "$1"; }

testForkOnlyInSpawn() {
	local f bad=""
	for f in "$LIB"/*.c "$ACCELCTL_SRC"/cmd/*.c; do
		[ "$(basename "$f")" = spawn.c ] && continue
		code "$f" | grep -qE '\b(v?fork|posix_spawnp?)[[:space:]]*\(' && bad="$bad $(basename "$f")"
	done
	assertEquals "fork() outside lib/spawn.c (start children with ac_child_start)" "" "$bad"
}

testLogIsALeaf() {
	assertEquals "log.c includes only log.h" "log.h" "$(includes "$LIB/log.c")"
	assertEquals "log.h includes nothing of the project" "" "$(includes "$LIB/log.h")"
}

# The stores, their connection layers and the protocol never reach up into
# the helper (its state, its clients, the client library).
testStoresNameNoHelper() {
	local f h bad=""
	for f in xredis.c xetcd.c xnccl.c rconn.c rsentinel.c rcluster.c econn.c rdvproto.c store.h rdvproto.h; do
		[ -f "$LIB/$f" ] || continue
		for h in $(includes "$LIB/$f"); do
			case $h in helper.h | client.h | hconn.h | sync.h) bad="$bad $f:$h" ;; esac
		done
		code "$LIB/$f" | grep -qE '\bac_(hs|hconn_|helper_|client_)' && bad="$bad $f:calls"
	done
	assertEquals "a store or the protocol reaches into the helper" "" "$bad"
}

# The helper's loop and its connections know a transport only as struct
# ac_xport (xport.h), chosen in transport.c: they name no store.
testHelperNamesNoStore() {
	local f h bad=""
	for f in helper.c hconn.c helper.h coll.c; do
		for h in $(includes "$LIB/$f"); do
			case $h in xredis.h | xetcd.h | xnccl.h | rconn.h | rsentinel.h | rcluster.h | econn.h | rdvproto.h | store.h) bad="$bad $f:$h" ;; esac
		done
	done
	assertEquals "the helper names a store" "" "$bad"
}

# Every file of lib/ says on its first line what it is for.
testFirstLineSaysWhatFor() {
	local f bad=""
	for f in "$LIB"/*.c "$LIB"/*.h; do
		head -n 1 "$f" | grep -qE "^/\* $(basename "$f"): " || bad="$bad $(basename "$f")"
	done
	assertEquals "files whose first line is not '/* NAME: what it is for'" "" "$bad"
}

load_shunit2
