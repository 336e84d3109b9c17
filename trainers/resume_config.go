package trainers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/internal/usage"
	"github.com/dmlbench/dmlbench/trainers/model"
)

// Resumable are the settings that a resumed run may change: they are
// outside the config hash (Config.Hash), so a finished run can be
// extended (epochs) or re-scored (evaluation and test-time settings).
const Resumable = "epochs, eval-every, metrics, compat, distance, backend, test-time*, save-embeddings"

// RecordedConfig is the configuration recorded in out's run.json, what a
// resumed run starts from; it says why when there is nothing to resume.
func RecordedConfig(out string) (Config, error) {
	var cfg Config
	path := filepath.Join(out, RunFile)
	r, err := record.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(out, CheckpointFile)); serr == nil {
			return cfg, fmt.Errorf("resume: %s holds a checkpoint but no run.json with its settings (dmlbench writes run.json first; this directory was changed by hand): remove %s to start over", out, filepath.Join(out, CheckpointFile))
		}
		return cfg, fmt.Errorf("resume: %s holds no run to continue (no run.json)", out)
	}
	if err != nil {
		return cfg, fmt.Errorf("resume: %w", err)
	}
	if r.Status == "failed" && len(r.History) == 0 && r.Initial == nil {
		if _, serr := os.Stat(filepath.Join(out, CheckpointFile)); serr != nil {
			return cfg, fmt.Errorf("resume: the run in %s failed before its first checkpoint: nothing to resume; start it again", out)
		}
	}
	cfg = Defaults()
	if err := json.Unmarshal(r.Config, &cfg); err != nil {
		return cfg, fmt.Errorf("resume: config in %s: %w", path, err)
	}
	return cfg, nil
}

// CheckResume refuses settings given with a resume that change a setting
// of the recorded run inside the config hash (a usage error naming their
// flags): the checkpoint was trained under the recorded value.
func CheckResume(recorded, cfg Config, out string) error {
	base := recorded.WithDefaults().Hash()
	rv, cv := reflect.ValueOf(&recorded).Elem(), reflect.ValueOf(cfg)
	var bad []string
	for _, f := range Settings() {
		if reflect.DeepEqual(rv.Field(f.Index).Interface(), cv.Field(f.Index).Interface()) {
			continue
		}
		one := recorded
		reflect.ValueOf(&one).Elem().Field(f.Index).Set(cv.Field(f.Index))
		if one.WithDefaults().Hash() != base {
			bad = append(bad, "--"+f.Flag)
		}
	}
	if len(bad) > 0 {
		return usage.Errorf("--resume continues the run recorded in %s, but %s would change its training settings; only %s may change on resume",
			filepath.Join(out, RunFile), strings.Join(bad, ", "), Resumable)
	}
	return nil
}

// ParseMethod reads KEY=VALUE method keys (--method, repeatable) into the
// map run.json records.
func ParseMethod(vals []string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(vals))
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usage.Errorf("--method %q: want KEY=VALUE", v)
		}
		m[strings.TrimSpace(k)] = val
	}
	return m, nil
}

// BuildVersions are the versions run.json records: dmlbench's (version),
// Go's, the BLAS's and the numeric modules' this binary was built with.
func BuildVersions(version string) map[string]string {
	v := map[string]string{"dmlbench": version, "go": runtime.Version(), "blas": model.BLASName}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "gorgonia.org/gorgonia", "gorgonia.org/tensor", "gonum.org/v1/gonum":
				v[d.Path] = d.Version
			}
		}
	}
	return v
}
