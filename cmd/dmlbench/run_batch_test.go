package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/trainers"
)

// A data set that carries its own batch size (the toy data sets, whose 60
// training rows cannot fill the trainer's 112) gets the size --help shows
// for it when no batch size is given; a flag or a --config key wins.
func TestDatasetBatchSizeDefault(t *testing.T) {
	cmd := command(t, "run")
	var help string
	for _, fl := range cmd.Flags {
		if fl.Names()[0] == "batch-size" {
			help = fl.String()
		}
	}
	config := func(args ...string) trainers.Config {
		t.Helper()
		var cfg trainers.Config
		app := &cli.App{Commands: []*cli.Command{{Name: "run", Flags: cmd.Flags, Action: func(c *cli.Context) (err error) {
			cfg, err = runConfig(c)
			return err
		}}}}
		if err := app.Run(append([]string{"x", "run", "--out", t.TempDir(), "--loss", "margin"}, args...)); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	checked := 0
	for _, name := range fixtures.Names() {
		own := fixtures.DefaultBatchSize(name)
		if own == 0 {
			continue
		}
		m := regexp.MustCompile(`[\s:,]` + regexp.QuoteMeta(name) + ` (\d+)\b`).FindStringSubmatch(help)
		if m == nil {
			t.Errorf("--batch-size help does not show %s's default %d: %q", name, own, help)
			continue
		}
		shown, _ := strconv.Atoi(m[1])
		if got := config("--dataset", name).BatchSize; got != shown || got != own {
			t.Errorf("%s: help shows batch size %d, an omitted flag gives %d (data set: %d)", name, shown, got, own)
		}
		if got := config("--dataset", name, "--batch-size", "32").BatchSize; got != 32 {
			t.Errorf("%s --batch-size 32: got %d", name, got)
		}
		withKey := filepath.Join(t.TempDir(), "run.yaml")
		os.WriteFile(withKey, []byte("dataset: "+name+"\nbatch-size: 40\n"), 0o644)
		if got := config("--config", withKey).BatchSize; got != 40 {
			t.Errorf("%s with batch-size: 40 in --config: got %d", name, got)
		}
		withoutKey := filepath.Join(t.TempDir(), "run.yaml")
		os.WriteFile(withoutKey, []byte("dataset: "+name+"\n"), 0o644)
		if got := config("--config", withoutKey).BatchSize; got != own {
			t.Errorf("%s from --config without batch-size: got %d, want %d", name, got, own)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no data set carries its own batch size")
	}
	if got, want := config("--dataset", "synthetic").BatchSize, trainers.Defaults().BatchSize; got != want {
		t.Errorf("synthetic: batch size %d, want the trainer's %d", got, want)
	}
}

// The toy data sets train with default flags.
func TestToyDatasetRunsWithDefaults(t *testing.T) {
	out := filepath.Join(t.TempDir(), "toy")
	if code, stderr := runExit("run", "--quiet", "--dataset", "toy-lines", "--loss", "margin", "--epochs", "1", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
