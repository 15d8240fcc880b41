#!/bin/bash
# slurm.sh: a private Slurm cluster on this one host, for the integration suites and
# the launcher benchmark: munged, slurmctld and NODES slurmd, all from a config in DIR.
#
#   bash slurm.sh start DIR NODES   start it; prints "export SLURM_CONF=..." to eval
#   bash slurm.sh stop DIR          stop every daemon started in DIR
#
# Debian's slurmd supports several daemons per host (slurmd -N NAME, a port each), so
# nodes n1..nNODES are simulated on one machine. Each slurmd runs in a UTS namespace of
# its own (unshare -u) with the node's name as hostname, so tasks see "their" host as on
# a real cluster. No cgroups (proctrack/linuxproc, task/none): containers lack them.
# Exit 77 where this cannot work (not root, no Slurm, no unshare), so suites skip.
set -eu

skip() { echo "slurm.sh: $*: skipped" >&2; exit 77; }

. "$(dirname "$0")/../sh/port.sh"

# wait_for WHAT SECONDS CMD...: poll CMD (a daemon coming up has no event to wait on)
# for at most SECONDS by the clock, not by a count of tries: a guard against a daemon
# that never comes, never a verdict on speed (4 slurmd on a busy 2-core machine took
# past the old 30). Every 0.3 s: sinfo is an RPC to the slurmctld it waits for, and
# asked 10 times a second it loaded the machine the daemons start on.
wait_for() {
	local what=$1 end=$((SECONDS + $2)); shift 2
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || { echo "slurm.sh: $what did not come up; logs in $dir" >&2; return 1; }
		sleep 0.3
	done
}

start() {
	dir=$1 nodes=$2
	[ "$(id -u)" = 0 ] || skip "slurmd must run as root"
	for c in munged slurmctld slurmd srun sinfo unshare; do
		command -v "$c" >/dev/null || skip "$c not installed"
	done
	unshare -u true 2>/dev/null || skip "no UTS namespaces here"
	mkdir -p "$dir/state" "$dir/spool"
	chmod 700 "$dir"

	# munge: a fresh key and a private socket, so no system munged is needed or touched.
	head -c 1024 /dev/urandom >"$dir/munge.key"
	chmod 400 "$dir/munge.key"
	munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
		--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" \
		</dev/null >>"$dir/munged.out" 2>&1
	wait_for munged 60 test -S "$dir/munge.sock"

	local ctl_port node_lines="" i
	ctl_port=$(free_port)
	for i in $(seq 1 "$nodes"); do
		node_lines="${node_lines}NodeName=n$i NodeHostname=n$i NodeAddr=127.0.0.1 Port=$(free_port) CPUs=8 RealMemory=1000 State=UNKNOWN
"
	done
	cat >"$dir/slurm.conf" <<EOF
ClusterName=accelctl-test
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=30
# Trust the node lines: the simulated nodes share 2 real CPUs.
SlurmdParameters=config_overrides
InactiveLimit=0
KillWait=5
$node_lines
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
	export SLURM_CONF=$dir/slurm.conf
	slurmctld -i -f "$SLURM_CONF" </dev/null >>"$dir/slurmctld.out" 2>&1
	wait_for slurmctld 120 sinfo
	for i in $(seq 1 "$nodes"); do
		mkdir -p "$dir/spool/n$i"
		# setsid: the daemon leaves our session; its output goes to its log, not to our pipes.
		setsid unshare -u sh -c "hostname n$i && exec slurmd -N n$i -f '$SLURM_CONF'" \
			</dev/null >>"$dir/slurmd.n$i.out" 2>&1
	done
	wait_for "$nodes slurmd" 120 sh -c "[ \"\$(sinfo -h -t idle -o %D)\" = $nodes ]"
	echo "export SLURM_CONF=$SLURM_CONF"
}

stop() {
	dir=$1
	local f
	for f in "$dir"/slurmd.*.pid "$dir/slurmctld.pid" "$dir/munged.pid"; do
		[ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	# Tasks of a step that outlived it (none, if right) must not outlive the suite.
	pkill -f "slurmstepd.*$dir" 2>/dev/null || true
	return 0
}

case ${1:-} in
start) start "$2" "${3:-2}" ;;
stop) stop "$2" ;;
*) echo "usage: slurm.sh start DIR NODES | stop DIR" >&2; exit 2 ;;
esac
