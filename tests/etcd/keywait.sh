# keywait.sh: waiting on etcd's keys with a deadline (sourced by the t_*.sh
# suites that delete or revoke under a job; needs etcdctl_ from etcd.sh and
# eventually from lib.sh: the clock is bash's, the pauses grow from 10 to 200 ms).

# etcd_wait_key RE [SECONDS]: until a key under accelctl/ matches the grep
# RE, SECONDS (20 by default: a guard, the helpers' repost takes a second or two
# on a busy machine under ASan) at most; false when it never did.
etcd_wait_key() { eventually "${2:-20}" etcd_key_there "$1"; }
etcd_key_there() { etcdctl_ get --prefix accelctl/ --keys-only 2>/dev/null | grep -q -- "$1"; }

# etcd_wait_file FILE [SECONDS]: until FILE exists, SECONDS (30) at most.
etcd_wait_file() { eventually "${2:-30}" test -e "$1"; }
