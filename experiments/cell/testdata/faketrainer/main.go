// Command faketrainer is a deterministic trainer for the tests of command
// cells: it reads DMLBENCH_CELL, records what it was given, and writes per
// asked epoch the data set's features of the asked rows plus noise that
// shrinks with the epoch and grows with |log10(lr) + 2| (params lr), so
// that trials and epochs score differently. params.mode selects a fault;
// params kill_at and hold_at (an epoch; first start only) make it kill
// itself, or wait to be killed, after that epoch.
package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dmlbench/dmlbench/experiments/cell"
	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "faketrainer:", err)
		os.Exit(1)
	}
}

func num(p map[string]any, k string, def float64) float64 {
	switch v := p[k].(type) {
	case float64:
		return v
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return def
}

func run() error {
	var c cell.Contract
	if err := json.Unmarshal([]byte(os.Getenv(cell.EnvCell)), &c); err != nil {
		return err
	}
	resume := os.Getenv(cell.EnvResume) == "1"
	mode, _ := c.Params["mode"].(string)
	seen, _ := json.Marshal(map[string]any{"contract": c, "resume": resume, "pid": os.Getpid()})
	// Beside the trainer's directory, which dmlbench empties on a fresh
	// start: the tests count every start.
	f, err := os.OpenFile(filepath.Join(filepath.Dir(c.Dir), "seen.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "%s\n", seen)
	f.Close()
	switch mode {
	case "diverge":
		fmt.Fprintln(os.Stderr, "loss is NaN at step 12")
		os.Exit(cell.ExitDiverged)
	case "diverge-final":
		if c.Stage == "final" && c.Seed == 1 {
			fmt.Fprintln(os.Stderr, "loss is NaN at step 3")
			os.Exit(cell.ExitDiverged)
		}
	case "fail":
		return fmt.Errorf("CUDA out of memory")
	case "background":
		// A logger left running that holds the trainer's stderr open.
		bg := exec.Command("sleep", "120")
		bg.Stderr = os.Stderr
		if err := bg.Start(); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(c.Dir), "background.pid"), []byte(strconv.Itoa(bg.Process.Pid)), 0o644); err != nil {
			return err
		}
	case "spam":
		// 4 MiB on each stream, first and last lines marked.
		line := strings.Repeat("x", 1023) + "\n"
		for _, w := range []*os.File{os.Stdout, os.Stderr} {
			fmt.Fprintln(w, "spam begins")
			for range 4096 {
				io.WriteString(w, line)
			}
			fmt.Fprintln(w, "spam ends")
		}
	}
	lr := num(c.Params, "lr", 0.01)
	noise := 0.05 + 0.3*math.Abs(math.Log10(lr)+2)
	ckpt := filepath.Join(c.Dir, "ckpt.txt")
	start := 1
	if b, err := os.ReadFile(ckpt); err == nil && resume {
		start, _ = strconv.Atoi(string(b))
		start++
	}
	killAt := int(num(c.Params, "kill_at", 0))
	holdAt := int(num(c.Params, "hold_at", 0))
	sleep := time.Duration(num(c.Params, "sleep_ms", 0)) * time.Millisecond
	for e := start; e <= c.Epochs; e++ {
		time.Sleep(sleep)
		fmt.Fprintf(os.Stderr, "epoch %d\n", e)
		lf, _ := os.OpenFile(filepath.Join(c.Dir, cell.LossFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		switch {
		case mode == "nan-loss" && e == 1:
			fmt.Fprintf(lf, "%d\tnan\n", e)
		case mode == "nan-loss" && e == 2:
			fmt.Fprintf(lf, "%d\t-inf\n", e)
		case mode == "nan-loss":
			fmt.Fprintf(lf, "%d\tnot-a-number\n", e)
		default:
			fmt.Fprintf(lf, "%d\t%g\n", e, noise/float64(e))
		}
		lf.Close()
		asked := false
		for _, a := range c.EmbedEpochs {
			asked = asked || a == e
		}
		for name, r := range c.Embed {
			if !asked || (mode == "missing-epoch" && e == 2) {
				continue
			}
			if err := write(c, name, r, e, noise/float64(e), mode); err != nil {
				return err
			}
		}
		if err := os.WriteFile(ckpt, []byte(strconv.Itoa(e)), 0o644); err != nil {
			return err
		}
		if e == killAt && !resume {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		if e == holdAt && !resume {
			// Held after this epoch's files until killed: a test kills
			// its caller mid-command whatever the machine's speed.
			for {
				time.Sleep(time.Hour)
			}
		}
	}
	if mode == "rmtree" {
		// A trainer that cleans up after itself: its directory, and a
		// cell.json where it would be if the directory were dmlbench's.
		_ = os.Remove(filepath.Join(c.Dir, "cell.json"))
		return os.RemoveAll(c.Dir)
	}
	return nil
}

func write(c cell.Contract, name string, r cell.Rows, epoch int, noise float64, mode string) error {
	x, err := arrays.LoadEmbeddings(filepath.Join(c.Data, r.Split+"_emb.npy"))
	if err != nil {
		return err
	}
	rows, err := arrays.LoadIndices(r.Rows)
	if err != nil {
		return err
	}
	n := len(rows)
	if mode == "wrong-rows" {
		n--
	}
	out := mat32.Matrix{Rows: n, Cols: x.Cols, Data: make([]float32, n*x.Cols)}
	for i := range n {
		for j := range x.Cols {
			h := uint64(rows[i]*7919+j*104729+epoch*31+int(c.Seed)*1000003) * 0x9E3779B97F4A7C15
			u := float64(h>>11)/float64(1<<53) - 0.5
			out.Data[i*x.Cols+j] = x.Data[rows[i]*x.Cols+j] + float32(noise*u)
		}
	}
	if mode == "nan" && epoch == 2 {
		out.Data[3] = float32(math.NaN())
	}
	path := filepath.Join(c.Embeddings, cell.EmbeddingFile(name, epoch)+".npy")
	switch mode {
	case "int-dtype":
		return rawNPY(path, "<i8", fmt.Sprintf("(%d, %d)", n, x.Cols), make([]byte, 8*n*x.Cols))
	case "one-d":
		return rawNPY(path, "<f4", fmt.Sprintf("(%d,)", n*x.Cols), make([]byte, 4*n*x.Cols))
	}
	return arrays.SaveNPY(path, out)
}

func rawNPY(path, descr, shape string, data []byte) error {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	h += "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(len(h)))
	b = append(append(b, h...), data...)
	return os.WriteFile(path, b, 0o644)
}
