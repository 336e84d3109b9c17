#!/usr/bin/env bash
# Kill matrix: kills `dmlbench run` and `dmlbench suite` at timed moments
# (SIGKILL and SIGINT after a delay) and at placed ones (strace's syscall
# fault injection: SIGKILL on the Nth rename or fsync, i.e. just before a
# checkpoint or run.json becomes visible, or between writing and syncing
# it), then lets the next command recover the directory — `run --resume`
# when a checkpoint is there, else the same `run` again; the same `suite`
# command again — and checks that the recovered result is bit-identical to
# an uninterrupted run (every number of run.json but timings) and that no
# temporary or claim file is left. With a local Slurm cluster up (`scontrol
# ping` answers; FAULT_SLURM=1 starts one) it also cancels a running array
# task and resubmits. The command section runs `tune` with a numpy
# trainer that misbehaves as real trainers do (a background child, a
# launcher's grandchild, a NaN loss, a diverging final seed, a trainer
# deleting its directory, an edited script) and checks each outcome.
#
# Usage: scripts/fault.sh [BIN]   (BIN default: bin/dmlbench, built if missing)
# Environment: FAULT_QUICK=1 runs a smaller matrix; FAULT_PARTS picks
# sections (default "run placed suite slurm command").
set -u
cd "$(dirname "$0")/.."
BIN=${1:-bin/dmlbench}
if [ ! -x "$BIN" ]; then
	go build -o "$BIN" ./cmd/dmlbench || exit 1
fi
BIN=$(readlink -f "$BIN")
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
WORK=$(mktemp -d /tmp/dmlbench-fault.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
want() { case " ${FAULT_PARTS:-run placed suite slurm command} " in *" $1 "*) return 0 ;; esac; return 1; }
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# A run of 4 epochs of ~0.3 s each on the synthetic data set.
RUN=(run --dataset synthetic --loss margin --miner distance --sampler spc-2 --epochs 4 --iters-per-epoch 40 --batch-size 64 --seed 3 --quiet)

# same A B: every field of two run.json files but timings and versions is equal.
same() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
def strip(r):
    for k in ("timings", "version", "versions", "name"):
        r.pop(k, None)
    for h in r.get("history") or []:
        h.pop("seconds", None)
    return r
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print("  differs: %s: %s vs %s" % (k, str(a.get(k))[:200], str(b.get(k))[:200]), file=sys.stderr)
    sys.exit(1)
PYEOF
}

# leftovers DIR: temporary and claim files left in DIR (recursively).
leftovers() { find "$1" \( -name '.tmp-*' -o -name 'claim.json*' \) -print; }

# recover_run DIR: what a user (or a suite) does next: resume from the
# checkpoint if there is one, else start the run again; at most 5 tries.
recover_run() {
	local dir=$1 i
	for i in 1 2 3 4 5; do
		if [ -f "$dir/run.json" ] && grep -q '"status": "done"' "$dir/run.json"; then return 0; fi
		if [ -f "$dir/checkpoint.gob" ]; then
			"$BIN" run --out "$dir" --resume --quiet 2>>"$WORK/recover.log" && return 0
		else
			"$BIN" "${RUN[@]}" --out "$dir" 2>>"$WORK/recover.log" && return 0
		fi
	done
	return 1
}

check_run() { # check_run NAME DIR
	if ! recover_run "$2"; then bad "$1: not recovered ($(tail -1 "$WORK/recover.log"))"; return; fi
	if ! same "$WORK/ref/run.json" "$2/run.json"; then bad "$1: result differs from the uninterrupted run"; return; fi
	local left
	left=$(leftovers "$2")
	if [ -n "$left" ]; then bad "$1: left $left"; return; fi
	ok
}

if want run || want placed; then
	echo "fault: reference run" >&2
	"$BIN" "${RUN[@]}" --out "$WORK/ref" || { echo "fault: the reference run failed" >&2; exit 1; }
fi

# 1. Timed kills of run: SIGKILL and SIGINT after a delay.
delays="0.05 0.15 0.3 0.5 0.8 1.1 1.5"
[ "${FAULT_QUICK:-}" = 1 ] && delays="0.15 0.8"
want run && echo "fault: timed kills of run" >&2
want run && for sig in KILL INT; do
	for d in $delays; do
		dir="$WORK/timed-$sig-$d"
		"$BIN" "${RUN[@]}" --out "$dir" 2>/dev/null &
		pid=$!
		sleep "$d"
		kill -s "$sig" "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		check_run "run, SIG$sig after ${d}s" "$dir"
	done
done

# 2. Placed kills of run: SIGKILL on the Nth rename (a file about to
# replace its predecessor) and on the Nth fsync (written, not yet synced).
if ! want placed; then
	:
elif command -v strace >/dev/null && strace -f -o /dev/null -e inject=getpid:retval=1 true 2>/dev/null; then
	echo "fault: placed kills of run (strace)" >&2
	ns="1 2 3 4 5 6 7 8 9 10"
	[ "${FAULT_QUICK:-}" = 1 ] && ns="1 2 3 6"
	for call in rename fsync; do
		sys=$call
		[ "$call" = rename ] && sys=rename,renameat,renameat2
		for n in $ns; do
			dir="$WORK/placed-$call-$n"
			strace -f -o /dev/null -e trace="$sys" -e inject="$sys":signal=KILL:when="$n" \
				"$BIN" "${RUN[@]}" --out "$dir" 2>/dev/null &
			wait $! 2>/dev/null
			check_run "run, SIGKILL at $call #$n" "$dir"
		done
	done
	# Kill the resume too: at its first and second checkpoint rename.
	for n in 1 2; do
		dir="$WORK/placed-resume-$n"
		"$BIN" "${RUN[@]}" --out "$dir" --epochs 1 2>/dev/null
		strace -f -o /dev/null -e trace=rename,renameat,renameat2 -e inject=rename,renameat,renameat2:signal=KILL:when="$n" \
			"$BIN" run --out "$dir" --resume --epochs 4 --quiet 2>/dev/null &
		wait $! 2>/dev/null
		# the extended run: resume with --epochs 4 until done
		for i in 1 2 3; do
			grep -q '"status": "done"' "$dir/run.json" 2>/dev/null && grep -q '"epoch": 4' "$dir/run.json" && break
			"$BIN" run --out "$dir" --resume --epochs 4 --quiet 2>>"$WORK/recover.log"
		done
		if same "$WORK/ref/run.json" "$dir/run.json" && [ -z "$(leftovers "$dir")" ]; then ok; else bad "resume killed at rename #$n"; fi
	done
else
	echo "fault: strace cannot inject faults here; placed kills SKIPPED" >&2
fi

# 3. Suite kills: SIGKILL and SIGINT of the suite parent (its runs die
# with it), then the same command again until every cell is done.
mkdir -p "$WORK/suite"
cat >"$WORK/suite/s.yaml" <<YAML
epochs: 3
grid:
  dataset: synthetic
  loss: [margin, contrastive]
  miner: distance
  sampler: spc-2
  embed-dim: [16]
  seed: [0, 1]
  extra: [--iters-per-epoch, "30", --batch-size, "64"]
YAML
if want suite || want slurm; then
	"$BIN" suite "$WORK/suite/s.yaml" --out "$WORK/suite/ref" -q 2>/dev/null || bad "reference suite failed"
fi
sdelays="0.3 1 2 3.5"
[ "${FAULT_QUICK:-}" = 1 ] && sdelays="1 2.5"
want suite && echo "fault: timed kills of suite" >&2
want suite && for sig in KILL INT; do
	for d in $sdelays; do
		out="$WORK/suite/$sig-$d"
		"$BIN" suite "$WORK/suite/s.yaml" --out "$out" -q --jobs 2 2>/dev/null &
		pid=$!
		sleep "$d"
		kill -s "$sig" "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		sleep 0.2
		for i in 1 2 3; do
			"$BIN" suite "$WORK/suite/s.yaml" --out "$out" -q 2>>"$WORK/recover.log" && break
		done
		good=1
		for f in $(cd "$WORK/suite/ref" && find . -name run.json); do
			same "$WORK/suite/ref/$f" "$out/$f" || { good=0; echo "  cell $f" >&2; }
		done
		left=$(leftovers "$out")
		[ -n "$left" ] && { good=0; echo "  left $left" >&2; }
		[ $good = 1 ] && ok || bad "suite, SIG$sig after ${d}s"
	done
done

# 4. Slurm: cancel a running array task, resubmit, compare. Runs with a
# local cluster up (scontrol ping answers), or, with FAULT_SLURM=1, starts
# one with scripts/slurm-local.sh (root) and stops it after. Serialised with
# other users of the local cluster by flock on /tmp/dmlbench-slurm.lock.
out="$WORK/suite/slurm"
want slurm && (
	flock 9
	started=
	if ! scontrol ping >/dev/null 2>&1; then
		if [ "${FAULT_SLURM:-}" = 1 ] && bash scripts/slurm-local.sh start >"$WORK/slurm-start.log" 2>&1; then
			started=1
		else
			exit 3
		fi
	fi
	echo "fault: a Slurm task cancelled, the suite resubmitted" >&2
	wait_gone() { for i in $(seq 900); do [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ] && return; sleep 0.2; done; }
	id=$("$BIN" suite "$WORK/suite/s.yaml" --out "$out" --executor slurm 2>>"$WORK/recover.log")
	if [ -n "$id" ]; then
		running=
		for i in $(seq 300); do
			running=$(squeue -h -j "$id" -t R -o %i 2>/dev/null | head -1)
			[ -n "$running" ] && break
			sleep 0.2
		done
		sleep 1.5
		[ -n "$running" ] && scancel "$running"
		wait_gone "$id"
		id2=$("$BIN" suite "$WORK/suite/s.yaml" --out "$out" --executor slurm 2>>"$WORK/recover.log")
		[ -n "$id2" ] && wait_gone "$id2"
		echo "$running" >"$WORK/slurm-cancelled"
	fi
	[ -n "$started" ] && bash scripts/slurm-local.sh stop >/dev/null 2>&1
	exit 0
) 9>/tmp/dmlbench-slurm.lock
rc=$?
if ! want slurm; then
	:
elif [ $rc = 3 ]; then
	echo "fault: no local Slurm cluster up (scontrol ping; FAULT_SLURM=1 starts one); Slurm kills SKIPPED" >&2
else
	good=1
	[ -s "$WORK/slurm-cancelled" ] || { good=0; echo "  no task was running to cancel" >&2; }
	for f in $(cd "$WORK/suite/ref" && find . -name run.json); do
		same "$WORK/suite/ref/$f" "$out/$f" || { good=0; echo "  cell $f" >&2; }
	done
	left=$(leftovers "$out")
	[ -n "$left" ] && { good=0; echo "  left $left" >&2; }
	[ $good = 1 ] && ok || bad "slurm: scancel of a running task, resubmit"
fi

# 5. Command cells: a numpy trainer (train.py) with a fault per spec.
want command && . scripts/fault-command.sh

echo "fault: $pass passed, $fail failed" >&2
[ "$fail" = 0 ]
