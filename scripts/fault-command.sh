# Command-cell faults of scripts/fault.sh (sourced by it: BIN, PY, WORK,
# ok and bad come from there). Each fault is a one-method spec whose
# trainer, train.py (numpy), misbehaves as params.mode says; the expected
# outcome is checked after `tune`.

CW=$WORK/command
mkdir -p "$CW"
"$PY" - "$CW/data" <<'PYEOF'
import os, sys
import numpy as np
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(0)
for split, first, classes in (("train", 0, 6), ("test", 100, 4)):
    y = np.repeat(np.arange(first, first + classes), 5)
    x = rng.normal(size=(classes, 4))[y - first] + 0.3 * rng.normal(size=(len(y), 4))
    np.save(os.path.join(d, split + "_emb.npy"), x.astype(np.float32))
    np.save(os.path.join(d, split + "_labels.npy"), y.astype(np.int64))
PYEOF
cat >"$CW/train.py" <<'PYEOF'
import json, os, subprocess, sys, time
import numpy as np
c = json.loads(os.environ["DMLBENCH_CELL"])
mode = c["params"].get("mode", "")
cell = os.path.dirname(c["dir"])
with open(os.path.join(cell, "starts.txt"), "a") as f:
    f.write("%d\n" % os.getpid())
if mode == "background":
    p = subprocess.Popen(["sleep", "120"])          # inherits stderr, as a logger does
    open(os.path.join(cell, "background.pid"), "w").write(str(p.pid))
if mode == "diverge-final" and c["stage"] == "final" and c["seed"] == 1:
    print("loss is NaN at step 3", file=sys.stderr)
    sys.exit(3)
for e in range(1, c["epochs"] + 1):
    if mode == "slow":
        time.sleep(1)
    with open(os.path.join(c["dir"], "trainer-loss.tsv"), "a") as f:
        f.write("%d\t%s\n" % (e, "nan" if mode == "nan-loss" else "%.4f" % (1.0 / e)))
    if e not in c["embed_epochs"]:
        continue
    for name, r in c["embed"].items():
        x = np.load(os.path.join(c["data"], r["split"] + "_emb.npy"))[np.load(r["rows"])]
        x = x + np.random.default_rng(c["seed"] * 100 + e).normal(scale=0.5 / e, size=x.shape)
        out = os.path.join(c["embeddings"], "%s_e%03d.npy" % (name, e))
        np.save(out + ".tmp.npy", x.astype(np.float32))
        os.replace(out + ".tmp.npy", out)
if mode == "rmtree":
    import shutil
    try:
        os.remove(os.path.join(c["dir"], "cell.json"))
    except OSError:
        pass
    shutil.rmtree(c["dir"])
PYEOF
printf '#!/bin/sh\n# a launcher: the trainer is its child, not exec-ed\n%s train.py >>launch.log 2>&1\nexit $?\n' "$PY" >"$CW/launch.sh"

# cspec NAME MODE [SEEDS] [BUDGET] [COMMAND]: a spec in $CW/NAME.yaml, output $CW/NAME.
cspec() {
	local seeds=${3:-[0]} budget=${4:-1} command=${5:-"[$PY, train.py]"}
	cat >"$CW/$1.yaml" <<YAML
out: $1
dataset: dir:data
seed: 0
search: random
budget: $budget
folds: 2
fixed: {epochs: 2, embed-dim: 4}
final: {seeds: $seeds}
methods:
  - name: m
    command: $command
    fixed: {mode: "$2"}
    space: {lr: {low: 1.0e-3, high: 1.0e-1, log: true}}
YAML
}
# ctune NAME [ARGS]: runs tune on NAME.yaml with a time limit (a hang fails).
ctune() { local n=$1; shift; timeout 120 "$BIN" tune "$CW/$n.yaml" --quiet "$@" 2>>"$CW/$n.err"; }
# dead PID: the process is gone (or a zombie) within 5 s.
dead() {
	local i
	for i in $(seq 50); do
		case $(ps -o stat= -p "$1" 2>/dev/null) in "" | Z*) return 0 ;; esac
		sleep 0.1
	done
	return 1
}
echo "fault: command cells" >&2

# A background child holding the trainer's stderr: the cell ends with the
# trainer, and the child with its cell.
cspec bg background
t0=$(date +%s)
if ! ctune bg; then
	bad "command background child: tune failed ($(tail -1 "$CW/bg.err"))"
elif [ $(($(date +%s) - t0)) -gt 60 ]; then
	bad "command background child: tune took $(($(date +%s) - t0)) s"
else
	good=1
	for f in $(find "$CW/bg" -name background.pid); do
		dead "$(cat "$f")" || { good=0; kill -9 "$(cat "$f")" 2>/dev/null; }
	done
	[ $good = 1 ] && ok || bad "command background child: a background child outlived its cell"
fi

# kill -9 of tune while a launcher's child trains: the child dies too,
# and the rerun finishes with every cell done.
cspec launcher slow "[0]" 1 "[/bin/sh, launch.sh]"
"$BIN" tune "$CW/launcher.yaml" --quiet 2>>"$CW/launcher.err" &
tpid=$!
pid=
for i in $(seq 300); do
	pid=$(cat "$CW"/launcher/trials/m/t000/f*/starts.txt 2>/dev/null | head -1)
	[ -n "$pid" ] && break
	sleep 0.1
done
kill -9 "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null
if [ -z "$pid" ]; then
	bad "command launcher grandchild: the trainer never started"
elif ! dead "$pid"; then
	kill -9 "$pid" 2>/dev/null
	bad "command launcher grandchild: trainer $pid outlived kill -9 of tune"
elif ! ctune launcher || ! grep -q '"done": true' "$CW/launcher/tune.json"; then
	bad "command launcher grandchild: the rerun did not finish ($(tail -1 "$CW/launcher.err"))"
else
	ok
fi

# A NaN loss: recorded as null, the tune finishes.
cspec nan nan-loss
if ! ctune nan; then
	bad "command NaN loss: tune failed ($(tail -1 "$CW/nan.err"))"
elif ! grep -q '"loss": null' "$CW/nan/trials/m/t000/f0/run.json"; then
	bad "command NaN loss: run.json's loss is not null"
else
	ok
fi

# A final seed that diverges: left out of the row with a note, not retried.
cspec div diverge-final "[0, 1]"
if ! ctune div; then
	bad "command final divergence: tune failed ($(tail -1 "$CW/div.err"))"
else
	rep=$("$BIN" report "$CW/div" --format markdown 2>&1)
	starts=$(cat "$CW"/div/final/m/f*/s1/starts.txt 2>/dev/null | wc -l)
	ctune div
	again=$(cat "$CW"/div/final/m/f*/s1/starts.txt 2>/dev/null | wc -l)
	if ! printf '%s' "$rep" | grep -q "final seed 1 left out (n = 1 of 2 seeds)"; then
		bad "command final divergence: no note in the report: $(printf '%s' "$rep" | tail -3)"
	elif [ "$starts" != "$again" ]; then
		bad "command final divergence: the diverged seed was started again ($starts, then $again starts)"
	else
		ok
	fi
fi

# A trainer that deletes its directory (and a cell.json in it): every cell
# starts once, the tune finishes.
cspec rm rmtree
if ! ctune rm; then
	bad "command deleted directory: tune failed ($(tail -1 "$CW/rm.err"))"
elif [ "$(cat "$CW"/rm/trials/m/t000/f*/starts.txt | wc -l)" != 2 ] || ! grep -q '"done": true' "$CW/rm/tune.json"; then
	bad "command deleted directory: $(cat "$CW"/rm/trials/m/t000/f*/starts.txt | wc -l) starts of 2 cells"
else
	ok
fi

# An edited script and a larger budget: refused, naming the script.
cspec edit "" "[0]" 1
if ! ctune edit; then
	bad "command edited script: the first tune failed ($(tail -1 "$CW/edit.err"))"
else
	cp "$CW/train.py" "$CW/train.py.orig"
	echo "# edited" >>"$CW/train.py"
	cspec edit "" "[0]" 2
	if ctune edit; then
		bad "command edited script: the rerun with the edited script ran"
	elif ! tail -1 "$CW/edit.err" | grep -q "train.py changed since"; then
		bad "command edited script: refused without naming it: $(tail -1 "$CW/edit.err")"
	else
		ok
	fi
	mv "$CW/train.py.orig" "$CW/train.py"
fi
