package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

// TestRunRegularizerFlags: the regulariser flags reach the config recorded
// in run.json and the method keys `report --group-by` separates runs by.
func TestRunRegularizerFlags(t *testing.T) {
	dir := t.TempDir()
	read := func(name string) (*record.Run, trainers.Config) {
		t.Helper()
		r, err := record.Read(filepath.Join(dir, name, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		var cfg trainers.Config
		if err := json.Unmarshal(r.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		return r, cfg
	}
	if err := runTrainCLI(t, "--loss", "margin", "--rho-reg", "0.25", "--das", "--das-params", "K=2", "--out", filepath.Join(dir, "rd")); err != nil {
		t.Fatal(err)
	}
	r, cfg := read("rd")
	if r.Status != "done" || cfg.RhoReg != 0.25 || !cfg.DAS || cfg.DASParams == nil || cfg.DASParams.K != 2 || cfg.DASParams.T != 3 {
		t.Fatalf("status %s, config %+v", r.Status, cfg)
	}
	if r.Method["rho-reg"] != "0.25" || r.Method["das"] != "T=3,K=2,Z=10,rs=0.01,rb=0.01" {
		t.Fatalf("method keys %v", r.Method)
	}
	if err := runTrainCLI(t, "--loss", "triplet", "--mixup", "--out", filepath.Join(dir, "mx")); err != nil {
		t.Fatal(err)
	}
	r, cfg = read("mx")
	if !cfg.Mixup || cfg.MixupAlpha != 2 || r.Method["mixup"] != "2" {
		t.Fatalf("mixup: config %+v, method %v", cfg, r.Method)
	}
	if err := runTrainCLI(t, "--loss", "recallk", "--hyper", "simix=1", "--out", filepath.Join(dir, "sm")); err != nil {
		t.Fatal(err)
	}
	if r, _ = read("sm"); r.Method["simix"] != "1" {
		t.Fatalf("simix: method %v", r.Method)
	}
	// Plain runs carry no regulariser keys (and record the miner as none).
	if err := runTrainCLI(t, "--out", filepath.Join(dir, "plain")); err != nil {
		t.Fatal(err)
	}
	if r, _ = read("plain"); len(r.Method) != 4 || r.Method["miner"] != "none" {
		t.Fatalf("plain run method keys %v", r.Method)
	}
	for _, bad := range [][]string{
		{"--rho-reg", "0.2"}, // multisimilarity mines no tuples
		{"--loss", "margin", "--rho-reg", "1.5"},
		{"--loss", "margin", "--das", "--mixup"},
		{"--loss", "margin", "--das-params", "K=2"},
		{"--loss", "margin", "--das", "--das-params", "K=x"},
	} {
		err := runTrainCLI(t, append(bad, "--out", filepath.Join(dir, "bad"+strings.Join(bad, "")))...)
		if err == nil {
			t.Fatalf("%v accepted", bad)
		}
		t.Logf("%v: %v", bad, err)
	}
}
