#!/usr/bin/env bash
# A one-node Slurm cluster on localhost, for testing `dmlbench suite
# --executor slurm` against the real scheduler (see docs/slurm.md).
#
#   bash scripts/slurm-local.sh start   # install (once), configure, start, wait until idle
#   bash scripts/slurm-local.sh stop    # stop the daemons this script started
#   bash scripts/slurm-local.sh status  # sinfo, or exit 1 when the cluster is down
#
# Uses Debian's packages (slurm-wlm 22.05, munge), must run as root, needs no
# systemd: munged, slurmctld and slurmd are started directly and tracked by
# their pid files. The node gets this machine's CPUs and memory (slurmd -C);
# proctrack/linuxproc and task/none, so no cgroups are needed. Idempotent:
# `start` on a running cluster only checks that the node is idle. Output of
# the package installation and the daemons goes to $SLURM_LOCAL_DIR
# (default /var/tmp/dmlbench-slurm).
set -euo pipefail

STATE=${SLURM_LOCAL_DIR:-/var/tmp/dmlbench-slurm}
CONF=/etc/slurm/slurm.conf
MUNGE_PID=/run/munge/munged.pid
CTLD_PID=$STATE/slurmctld.pid
SLURMD_PID=$STATE/slurmd.pid

say() { echo "slurm-local: $*" >&2; }
die() { say "$*"; exit 1; }

alive() { # alive PIDFILE
	[[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

install_packages() {
	if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null && command -v sbatch >/dev/null; then
		return
	fi
	say "installing slurm-wlm and munge (log: $STATE/apt.log)"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get -o DPkg::Lock::Timeout=900 install -y slurm-wlm munge >"$STATE/apt.log" 2>&1; then
		apt-get -o DPkg::Lock::Timeout=900 update >>"$STATE/apt.log" 2>&1 || true
		apt-get -o DPkg::Lock::Timeout=900 install -y slurm-wlm munge >>"$STATE/apt.log" 2>&1 ||
			die "apt-get install slurm-wlm munge failed (see $STATE/apt.log)"
	fi
}

start_munge() {
	install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
	install -d -o munge -g munge -m 0755 /run/munge
	if [[ ! -s /etc/munge/munge.key ]]; then
		mungekey --create --keyfile=/etc/munge/munge.key >>"$STATE/munge-setup.log" 2>&1 ||
			dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
	fi
	chown munge:munge /etc/munge/munge.key
	chmod 0400 /etc/munge/munge.key
	if alive "$MUNGE_PID" || munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
		return # ours, or one started by the package's init script
	fi
	runuser -u munge -- /usr/sbin/munged --pid-file="$MUNGE_PID" --log-file=/var/log/munge/munged.log ||
		die "munged did not start (see /var/log/munge/munged.log)"
}

write_conf() {
	local node host tmp
	host=$(hostname -s)
	# slurmd -C prints this machine's topology and memory as a NodeName line.
	node=$(slurmd -C | head -n 1)
	[[ $node == NodeName=* ]] || die "slurmd -C printed no NodeName line: $node"
	if [[ -s $CONF ]] && ! grep -q '^# Written by dmlbench scripts/slurm-local.sh' "$CONF"; then
		die "$CONF exists and was not written by this script: not touching a real cluster's configuration"
	fi
	install -d -m 0755 /etc/slurm "$STATE/ctld" "$STATE/slurmd"
	tmp=$(mktemp)
	cat >"$tmp" <<EOF
# Written by dmlbench scripts/slurm-local.sh: a one-node test cluster.
ClusterName=dmlbench
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
MinJobAge=600
SlurmdTimeout=60
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
	if ! cmp -s "$tmp" "$CONF"; then
		mv "$tmp" "$CONF"
		chmod 0644 "$CONF"
		CONF_CHANGED=1
	else
		rm -f "$tmp"
	fi
}

wait_idle() {
	local i state
	for i in $(seq 1 150); do
		state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1 || true)
		case $state in
		idle | mixed | allocated)
			say "node ${state} ($(sinfo -h -o '%c CPUs, %m MB' | head -n 1))"
			return 0
			;;
		down* | drain*)
			scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
			;;
		esac
		sleep 0.2
	done
	die "the node did not become idle in 30 s (state: ${state:-none}; logs in $STATE)"
}

start() {
	[[ $(id -u) == 0 ]] || die "must run as root (it installs packages and starts daemons)"
	mkdir -p "$STATE"
	install_packages
	start_munge
	CONF_CHANGED=0
	write_conf
	if [[ $CONF_CHANGED == 1 ]] && { alive "$CTLD_PID" || alive "$SLURMD_PID"; }; then
		say "slurm.conf changed: restarting the daemons"
		stop_slurm
	fi
	if ! alive "$CTLD_PID"; then
		slurmctld -i >>"$STATE/slurmctld.out" 2>&1 || die "slurmctld did not start (see $STATE/slurmctld.log)"
	fi
	if ! alive "$SLURMD_PID"; then
		slurmd >>"$STATE/slurmd.out" 2>&1 || die "slurmd did not start (see $STATE/slurmd.log)"
	fi
	wait_idle
}

stop_pid() { # stop_pid PIDFILE NAME
	local pid i
	alive "$1" || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || true
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	say "$2 (pid $pid) did not stop in 5 s: killing it"
	kill -9 "$pid" 2>/dev/null || true
}

stop_slurm() {
	stop_pid "$SLURMD_PID" slurmd
	stop_pid "$CTLD_PID" slurmctld
}

stop() {
	stop_slurm
	stop_pid "$MUNGE_PID" munged
	say "stopped"
}

case ${1:-start} in
start) start ;;
stop) stop ;;
status) sinfo ;;
*) die "usage: $0 [start|stop|status]" ;;
esac
