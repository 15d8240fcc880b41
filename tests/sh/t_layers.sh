# t_layers.sh: the source's layers stay apart: lib/'s folders in their order, one fork, a leaf log, no store in the helper, no helper in a store.
. "$(dirname "$0")/lib.sh"

LIB=$ACCELCTL_SRC/lib

# code FILE...: the files without their comments (so that prose may name
# what code must not call).
code() { sed 's|//.*||' "$@" | perl -0pe 's|/\*.*?\*/||gs'; }

# includes FILE: the project headers FILE includes, one a line.
includes() { sed -n 's/^#include "\([^"]*\)".*/\1/p' "$1"; }

# src NAME: the path of lib's file NAME, in whichever folder it is (the test
# fails when there is none: a file renamed must not drop out of a check).
src() {
	local f; f=$(ls "$LIB"/*/"$1" 2>/dev/null | head -n 1)
	[ -n "$f" ] || fail "lib/*/$1: no such file (renamed? this test names it)"
	echo "${f:-/nonexistent/$1}"
}

# The layers, lowest first: a folder of lib/ includes headers of its own and of
# the folders before it, never of one after it or of another at its level
# (the stores and the tools beside them). config.h is generated (build tree).
LAYERS="base detect runtime wire coll proto redis|etcd|nccl|server|trace helper client"

# layer_of FOLDER: its rank in LAYERS (same rank: one level).
layer_of() {
	local i=0 l
	for l in $LAYERS; do
		case "|$l|" in *"|$1|"*) echo "$i"; return ;; esac
		i=$((i + 1))
	done
	echo -1
}

# Every folder of lib/ is a layer, and no header is included from a higher
# one or from a sibling: the layers are what DESIGN-NOTES draws ("The
# layers"). At most 10 files are left at lib/'s top (only config.h.in now).
testLowerLayerNeverIncludesHigher() {
	local f d h hd bad="" ranks=""
	for d in "$LIB"/*/; do
		d=$(basename "$d")
		[ "$(layer_of "$d")" -ge 0 ] || bad="$bad $d:not-a-layer"
	done
	for f in "$LIB"/*/*.[ch]; do
		d=$(basename "$(dirname "$f")")
		for h in $(includes "$f"); do
			[ "$h" = config.h ] && continue
			hd=$(ls "$LIB"/*/"$h" 2>/dev/null | head -n 1)
			if [ -z "$hd" ]; then bad="$bad $(basename "$f"):$h:nowhere"; continue; fi
			hd=$(basename "$(dirname "$hd")")
			[ "$hd" = "$d" ] && continue
			[ "$(layer_of "$hd")" -lt "$(layer_of "$d")" ] || bad="$bad $d/$(basename "$f"):$hd/$h"
		done
	done
	assertEquals "a lower layer (or a sibling) includes a higher one's header" "" "$bad"
	assertTrue "at most 10 .c files at lib/'s top" "[ $(ls "$LIB"/*.c 2>/dev/null | wc -l) -le 10 ]"
	assertTrue "lib/ is in folders" "[ $(ls -d "$LIB"/*/ | wc -l) -ge 10 ]"
}

# No two files of lib/ reach each other through their headers, however far
# round: a file (NAME.c with NAME.h) that includes another's header is above
# it, and a circle would make "above" mean nothing. Each circle is printed
# with its files.
testNoIncludeCircles() {
	local f m h circles
	circles=$(for f in "$LIB"/*/*.[ch]; do
		m=$(basename "$f"); m=${m%.*}
		for h in $(includes "$f"); do
			[ "${h%.h}" = "$m" ] || echo "$m ${h%.h}"
		done
	done | python3 -c '
import sys
g = {}
for line in sys.stdin:
    a, b = line.split()
    g.setdefault(a, set()).add(b)
index, low, stack, on, out = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in sorted(g.get(v, ())):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: out.append(" ".join(sorted(c)))
sys.setrecursionlimit(10000)
for v in sorted(g):
    if v not in index: visit(v)
print("; ".join(out))
')
	assertEquals "include circles in lib/ (files that include each other's headers)" "" "$circles"
}

# coll.c is the leaf of its folder: the journal, the history and the trace
# read it (and are told its events through struct ac_coll_rec), it includes
# none of them.
testCollIsALeaf() {
	local f h bad=""
	for h in $(includes "$(src coll.c)") $(includes "$(src coll.h)"); do
		case $h in journal.h | history.h | trace.h | record.h | lost.h) bad="$bad $h" ;; esac
	done
	assertEquals "coll.c or coll.h includes what reads it" "" "$bad"
	bad=""
	for f in journal.h history.c trace.c record.c; do
		includes "$(src "$f")" | grep -qx coll.h || bad="$bad $f"
	done
	assertEquals "these no longer read coll.h (renamed? this test names them)" "" "$bad"
}

testForkOnlyInSpawn() {
	local f bad=""
	for f in "$LIB"/*/*.c "$ACCELCTL_SRC"/cmd/*.c; do
		[ "$(basename "$f")" = spawn.c ] && continue
		code "$f" | grep -qE '\b(v?fork|posix_spawnp?)[[:space:]]*\(' && bad="$bad $(basename "$f")"
	done
	assertEquals "fork() outside lib/base/spawn.c (start children with ac_child_start)" "" "$bad"
}

testLogIsALeaf() {
	assertEquals "log.c includes only log.h" "log.h" "$(includes "$(src log.c)")"
	assertEquals "log.h includes nothing of the project" "" "$(includes "$(src log.h)")"
}

# The stores, their connection layers and the protocol never reach up into
# the helper (its state, its clients, the client library).
testStoresNameNoHelper() {
	local f h bad=""
	for f in xredis.c xetcd.c xnccl.c rconn.c rsentinel.c rcluster.c econn.c rdvproto.c store.h rdvproto.h; do
		for h in $(includes "$(src "$f")"); do
			case $h in helper.h | client.h | hconn.h | sync.h) bad="$bad $f:$h" ;; esac
		done
		code "$(src "$f")" | grep -qE '\bac_(hs|hconn_|helper_|client_)' && bad="$bad $f:calls"
	done
	assertEquals "a store or the protocol reaches into the helper" "" "$bad"
}

# The helper's loop and its connections know a transport only as struct
# ac_xport (xport.h), chosen in transport.c: they name no store.
testHelperNamesNoStore() {
	local f h bad=""
	for f in helper.c hconn.c helper.h coll.c; do
		for h in $(includes "$(src "$f")"); do
			case $h in xredis.h | xetcd.h | xnccl.h | rconn.h | rsentinel.h | rcluster.h | econn.h | rdvproto.h | store.h) bad="$bad $f:$h" ;; esac
		done
	done
	assertEquals "the helper names a store" "" "$bad"
}

# Every file of lib/ says on its first line what it is for.
testFirstLineSaysWhatFor() {
	local f bad=""
	for f in "$LIB"/*/*.c "$LIB"/*/*.h; do
		head -n 1 "$f" | grep -qE "^/\* $(basename "$f"): " || bad="$bad $(basename "$f")"
	done
	assertEquals "files whose first line is not '/* NAME: what it is for'" "" "$bad"
}

load_shunit2
