# chaos/faults.sh: the faults of the chaos suite (tests/chaos.sh), one call each.
# Every fault returns only once the store serves again (a killed server or
# member restarted and answering, a stopped one continued), so faults never
# overlap and a 3-member etcd never loses its quorum: what the job must
# survive is each fault's own effect, one after the other, at random times.
# Each appends "US KIND ARG US_DONE WHAT" to $CD/faults (CD: the run's directory).

# helper_kill NODE: kill -9 that node's helper, as the OOM killer would; its pid
# file says which (checked against the process title: pids are reused).
chaos_helper_kill() {
	local p; p=$(helper_pid "$CD" "$1")
	if [ -n "$p" ] && grep -qa "accelctl helper" "/proc/$p/cmdline" 2>/dev/null; then
		kill -9 "$p" && echo "pid $p"
	else
		echo "none running"
	fi
}

# etcd_index ARG: a member index; "leader" is the member that leads now (the
# first member when an election is under way).
chaos_etcd_index() {
	if [ "$1" = leader ]; then
		local l; l=$(etcd_leader)
		echo "${l:-0}"
	else
		echo "$1"
	fi
}

# etcd_member_wait I: until member I answers (60 s at most, by the clock).
# The driver waits for it: the next fault may kill another member, and two
# down is a cluster without quorum, an outage no rank's deadline outlasts.
# A member started again right after SIGKILL may find its peer port still
# held (its dead self's connections, orphaned with unsent replication data:
# "bind: address already in use") and exit: it is started again, on the same
# port (its peer URL is the cluster's), until it stays up. Members that
# never came back made whole runs fail with every rank's "rendezvous
# unreachable" once a second member was killed.
chaos_etcd_member_wait() {
	local end=$((SECONDS + 60)) p
	until ETCDCTL_API=3 timeout 2 etcdctl --endpoints "127.0.0.1:${ETCD_CPORT[$1]}" \
	    --command-timeout=1s endpoint health >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		p=$(etcd_member_pid "$1")
		if [ -z "$p" ] || proc_gone "$p"; then
			echo "$(chaos_us) restart - $(chaos_us) member $1 exited after its restart ($(grep -o 'bind: .*' "$ETCD_DIR/m$1.log" | tail -n 1)): started again" >>"$CD/faults"
			sleep 0.5
			etcd_member_start "$1" existing
		fi
		sleep 0.2
	done
}

# chaos_inject STORE KIND ARG: one fault, logged.
chaos_inject() {
	local store=$1 kind=$2 arg=$3 t0 what="" m p ids
	t0=$(chaos_us)
	case $store.$kind in
	redis.kill) redis_kill; redis_restart; what="SIGKILL, restarted empty" ;;
	redis.term) redis_term; redis_restart; what="SIGTERM, restarted empty" ;;
	redis.flush) what="FLUSHALL: $(redis_cli flushall 2>&1)" ;;
	redis.stop) redis_pause; sleep 2; redis_resume; what="SIGSTOP 2 s" ;;
	redis.clients) what="CLIENT KILL TYPE normal: $(redis_cli client kill type normal 2>&1) killed" ;;
	etcd.kill)
		m=$(chaos_etcd_index "$arg")
		etcd_kill "$m"
		etcd_member_start "$m" existing
		chaos_etcd_member_wait "$m" || what="(did not answer again in 60 s) "
		what="${what}member $m SIGKILLed, restarted" ;;
	etcd.stop)
		m=$(chaos_etcd_index "$arg")
		p=$(etcd_member_pid "$m")
		kill -STOP "$p"; sleep 2; kill -CONT "$p"
		what="member $m SIGSTOP 2 s" ;;
	etcd.del) what="del --prefix accelctl/$JOB/: $(etcdctl_ del --prefix "accelctl/$JOB/" 2>&1) keys" ;;
	etcd.revoke)
		ids=($(etcdctl_ lease list 2>/dev/null | grep -E '^[0-9a-f]+$' | sort))
		if [ ${#ids[@]} -gt 0 ]; then
			m=${ids[arg % ${#ids[@]}]}
			what="lease $m of ${#ids[@]}: $(etcdctl_ lease revoke "$m" 2>&1)"
		else
			what="no lease to revoke"
		fi ;;
	*.helper) what="node $arg's helper: $(chaos_helper_kill "$arg")" ;;
	*) what="unknown fault" ;;
	esac
	echo "$t0 $kind $arg $(chaos_us) $what" >>"$CD/faults"
}
