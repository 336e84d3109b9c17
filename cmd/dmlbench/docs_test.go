package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// docPages returns README.md and docs/*.md (paths relative to the
// repository root) with their text.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range append(names, "../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(p, "../../")] = string(b)
	}
	return out
}

// cliFlags collects every flag name and alias of cmds and their
// subcommands.
func cliFlags(cmds []*cli.Command, set map[string]bool) {
	for _, c := range cmds {
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				set[n] = true
			}
		}
		cliFlags(c.Subcommands, set)
	}
}

// foreignFlags are flags of other programs that the docs show: sbatch
// (slurm.md), clang (gpu.md), cmake (faiss-gpu.md), the PyTorch timing
// scripts (performance-training.md), Roth et al.'s code (metrics.md) and
// bubblewrap (external.md).
var foreignFlags = map[string]string{
	"array": "sbatch", "dependency": "sbatch", "parsable": "sbatch", "output": "sbatch", "partition": "sbatch",
	"qos": "sbatch", "gpus": "sbatch", "requeue": "sbatch", "gres": "sbatch",
	"cuda-gpu-arch": "clang", "cuda-device-only": "clang",
	"build": "cmake", "target": "cmake", "install": "cmake",
	"steps": "torch_step.py", "warmup": "torch_step.py", "evaluate_on_gpu": "Roth et al.'s main.py",
	"device": "docs/examples/pytorch/train.py", "no-build-isolation": "pip", "system-site-packages": "python3 -m venv",
	"dev-bind": "bwrap", "ro-bind": "bwrap", "die-with-parent": "bwrap",
}

var docFlag = regexp.MustCompile(`(?:^|[\s\x60(\[|'"])--([a-z][a-z0-9_-]*[a-z0-9])`)

// TestDocFlagsExist checks that every --flag README.md and docs/*.md name
// is a flag of some dmlbench command (or of a program the docs show beside
// it, foreignFlags).
func TestDocFlagsExist(t *testing.T) {
	app := newApp()
	have := map[string]bool{"help": true, "version": true}
	for _, f := range app.Flags {
		for _, n := range f.Names() {
			have[n] = true
		}
	}
	cliFlags(app.Commands, have)
	pages := docPages(t)
	var names []string
	for p := range pages {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		seen := map[string]bool{}
		for _, m := range docFlag.FindAllStringSubmatch(pages[p], -1) {
			f := m[1]
			if have[f] || foreignFlags[f] != "" || seen[f] {
				continue
			}
			seen[f] = true
			t.Errorf("%s names --%s, which no dmlbench command has", p, f)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(?:#[^)]*)?\)`)

// TestDocsLinked checks that every docs/*.md page is linked from README.md
// or from another page, and that every relative link of README.md and
// docs/*.md points to a file or directory that exists.
func TestDocsLinked(t *testing.T) {
	pages := docPages(t)
	linked := map[string]bool{}
	for p, text := range pages {
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			full := filepath.Clean(filepath.Join(filepath.Dir(p), target))
			if _, err := os.Stat(filepath.Join("../..", full)); err != nil {
				t.Errorf("%s links %s, which does not exist", p, target)
				continue
			}
			if full != p {
				linked[filepath.ToSlash(full)] = true
			}
		}
	}
	for p := range pages {
		if strings.HasPrefix(p, "docs/") && !linked[p] {
			t.Errorf("%s is linked from neither README.md nor another page", p)
		}
	}
}
