package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/trainers"
)

func command(t *testing.T, name string) *cli.Command {
	t.Helper()
	for _, c := range newApp().Commands {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no command %s", name)
	return nil
}

var helpDefault = regexp.MustCompile(`\(default: (.*)\)$`)

// Every flag of run whose help states a default gets exactly that value in
// the effective configuration when it is omitted (the config run.json
// records), and every setting of trainers.Config has a flag.
func TestRunFlagDefaultsApplied(t *testing.T) {
	cmd := command(t, "run")
	var cfg trainers.Config
	app := &cli.App{Commands: []*cli.Command{{Name: "run", Flags: cmd.Flags, Action: func(c *cli.Context) (err error) {
		cfg, err = runConfig(c)
		return err
	}}}}
	if err := app.Run([]string{"x", "run", "--out", t.TempDir(), "--loss", "margin"}); err != nil {
		t.Fatal(err)
	}
	var eff map[string]any
	b, _ := json.Marshal(cfg)
	json.Unmarshal(b, &eff)
	keyOf := map[string]string{}
	for _, f := range trainers.Settings() {
		keyOf[f.Flag] = f.Key
	}
	checked := 0
	for _, fl := range cmd.Flags {
		name := fl.Names()[0]
		m := helpDefault.FindStringSubmatch(fl.String())
		key, isSetting := keyOf[name]
		if m == nil || !isSetting {
			continue
		}
		shown := strings.Trim(m[1], `"`)
		got, ok := eff[key]
		var gotText string
		switch v := got.(type) {
		case nil:
			gotText = map[bool]string{true: "", false: "<absent>"}[!ok]
			if !ok { // omitempty: the zero value
				gotText = "0"
				if shown == "false" {
					gotText = "false"
				}
			}
		case []any:
			parts := make([]string, len(v))
			for i, x := range v {
				parts[i] = strings.TrimSpace(strings.Trim(mustJSON(x), `"`))
			}
			gotText = strings.Join(parts, ",")
		default:
			gotText = strings.Trim(mustJSON(v), `"`)
		}
		if gotText != shown {
			t.Errorf("--%s: help says default %s, an omitted flag gives %s", name, shown, gotText)
		}
		checked++
	}
	if checked < 30 {
		t.Fatalf("checked only %d flags", checked)
	}
	if cfg.WeightDecay != 4e-4 {
		t.Fatalf("weight decay %v", cfg.WeightDecay)
	}
	// Every setting is a flag.
	names := map[string]bool{}
	for _, fl := range cmd.Flags {
		names[fl.Names()[0]] = true
	}
	for name := range keyOf {
		if !names[name] {
			t.Errorf("setting %s has no flag", name)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The flags of eval and suite state one default each (no doubled
// "(default 0.9, …) (default: 0)").
func TestEvalSuiteFlagsStateOneDefault(t *testing.T) {
	for _, name := range []string{"eval", "suite", "run"} {
		for _, fl := range command(t, name).Flags {
			if n := strings.Count(strings.ToLower(fl.String()), "default"); n > 1 {
				t.Errorf("%s %s: %d defaults in %q", name, fl.Names()[0], n, fl.String())
			}
		}
	}
}

// runExit runs the CLI as main does and returns the exit code and stderr.
func runExit(args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"dmlbench"}, args...), &out, &errb)
	return code, errb.String()
}

// An explicit 0 is used as given or refused, never replaced by the default;
// values outside a flag's domain are one-line usage errors (exit 2).
func TestExplicitZeroIsNotDefault(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "e0")
	if err := runTrainCLI(t, "--epochs", "0", "--out", dir); err != nil {
		t.Fatal(err)
	}
	r, err := record.Read(filepath.Join(dir, "run.json"))
	var cfg trainers.Config
	if err == nil {
		err = json.Unmarshal(r.Config, &cfg)
	}
	if err != nil || r.Status != "done" || len(r.History) != 0 || !sameMetrics(r.Final, r.Initial) || cfg.Epochs != 0 {
		t.Fatalf("--epochs 0: %v, status %s, %d epochs, config epochs %d", err, r.Status, len(r.History), cfg.Epochs)
	}
	base := []string{"run", "--quiet", "--dataset", "synthetic", "--loss", "margin", "--out", filepath.Join(t.TempDir(), "x")}
	for _, bad := range [][]string{{"--lr", "0"}, {"--batch-size", "0"}, {"--embed-dim", "0"}, {"--eval-every", "0"}, {"--lr", "NaN"},
		{"--batch-size", "100000"}, {"--test-time-k", "0"}} {
		code, msg := runExit(append(base, bad...)...)
		if code != 2 || strings.Count(msg, "\n") != 1 {
			t.Errorf("run %v: exit %d, %q", bad, code, msg)
		}
	}
	emb, labels := writeToyEval(t)
	for _, bad := range [][]string{{"--clusters", "-1"}, {"--clusters", "0"}, {"--eps", "-1"}, {"--min-samples", "-1"}, {"--threads", "-1"}, {"--test-time-k", "0"}} {
		code, msg := runExit(append([]string{"eval", "--quiet", "--emb", emb, "--labels", labels}, bad...)...)
		if code != 2 || strings.Count(msg, "\n") != 1 {
			t.Errorf("eval %v: exit %d, %q", bad, code, msg)
		}
	}
	if code, msg := runExit("eval", "--quiet", "--emb", emb, "--labels", labels, "--seed", "0", "--metrics", "NMI"); code != 0 {
		t.Errorf("eval --seed 0: exit %d %s", code, msg)
	}
}

// writeToyEval writes a small embedding file and its labels from a short run.
func writeToyEval(t *testing.T) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "toy")
	if err := runTrainCLI(t, "--epochs", "0", "--save-embeddings", "--out", dir); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "test_emb.npy"), filepath.Join(dir, "test_labels.npy")
}

// --resume restores every setting from run.json (here --save-embeddings
// and --metrics included); flags repeating the recorded
// values are accepted (suites resume so), flags changing a training
// setting are refused without touching run.json, and the interruption
// hint names the binary as invoked.
func TestResumeRestoresEverySetting(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	if err := runTrainCLI(t, "--epochs", "1", "--save-embeddings", "--seed", "2", "--out", dir); err != nil {
		t.Fatal(err)
	}
	emb := filepath.Join(dir, "test_emb.npy")
	os.Remove(emb)
	runPath := filepath.Join(dir, "run.json")
	before, _ := os.ReadFile(runPath)
	code, msg := runExit("run", "--quiet", "--out", dir, "--resume", "--epochs", "2", "--lr", "0.5")
	if code != 2 || !strings.Contains(msg, "--lr") {
		t.Fatalf("conflicting --lr on resume: exit %d %q", code, msg)
	}
	if code, msg = runExit("run", "--quiet", "--out", dir, "--resume", "--config", "x.yaml"); code != 2 || !strings.Contains(msg, "--config does not apply") {
		t.Fatalf("--config with --resume: exit %d %q", code, msg)
	}
	if after, _ := os.ReadFile(runPath); !bytes.Equal(before, after) {
		t.Fatal("a refused resume rewrote run.json")
	}
	if err := newApp().Run([]string{"dmlbench", "run", "--quiet", "--out", dir, "--resume", "--epochs", "2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(emb); err != nil {
		t.Fatalf("resume dropped --save-embeddings: %v", err)
	}
	r, _ := record.Read(runPath)
	var cfg trainers.Config
	json.Unmarshal(r.Config, &cfg)
	if r.Status != "done" || len(r.History) != 2 || !cfg.SaveEmbeddings || !reflect.DeepEqual(cfg.Metrics, []string{"R@1", "NMI"}) || len(r.Final) != 2 {
		t.Fatalf("resumed run: status %s, %d epochs, config %s, final %v", r.Status, len(r.History), r.Config, r.Final)
	}
	// The suite resumes by repeating the run's own flags.
	if err := runTrainCLI(t, "--epochs", "2", "--save-embeddings", "--seed", "2", "--out", dir, "--resume"); err != nil {
		t.Fatalf("resume repeating the recorded flags: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := newApp().RunContext(ctx, []string{"dmlbench", "run", "--quiet", "--out", dir, "--resume", "--epochs", "3"})
	if err == nil || !strings.Contains(err.Error(), "continue with: "+os.Args[0]+" run --out "+dir+" --resume") {
		t.Fatalf("interruption hint: %v", err)
	}
}

// Every eval flag whose help states a default value gives the same result
// omitted as given explicitly with that value.
func TestEvalFlagDefaultsApplied(t *testing.T) {
	emb, labels := writeToyEval(t)
	base := []string{"eval", "--quiet", "--emb", emb, "--labels", labels, "--format", "json"}
	result := func(args ...string) map[string]any {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"dmlbench"}, append(append([]string(nil), base...), args...)...), &out, &errb); code != 0 {
			t.Fatalf("eval %v: exit %d %s", args, code, errb.String())
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatalf("eval %v: %v", args, err)
		}
		delete(m, "timings")
		return m
	}
	omitted := result()
	checked := 0
	for _, fl := range command(t, "eval").Flags {
		name := fl.Names()[0]
		m := helpDefault.FindStringSubmatch(fl.String())
		// Defaults described in words (DefaultText: "all cores", "2k")
		// or only in the usage text have no value to pass.
		dg, ok := fl.(cli.DocGenerationFlag)
		if m == nil || name == "format" || name == "help" || !ok || dg.GetValue() == "" || reflect.ValueOf(fl).Elem().FieldByName("DefaultText").String() != "" {
			continue
		}
		if got := result("--" + name + "=" + strings.Trim(m[1], `"`)); !reflect.DeepEqual(got, omitted) {
			t.Errorf("--%s %s given differs from omitted:\n%v\n%v", name, m[1], got, omitted)
		}
		checked++
	}
	if checked < 8 {
		t.Fatalf("checked only %d flags", checked)
	}
}
