package trainers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/usage"
)

// ConfigSources are where a run's configuration comes from: the defaults
// (Defaults), or a --config file, or with Resume the configuration
// recorded in Out's run.json; then the command line's settings.
type ConfigSources struct {
	Out        string
	Resume     bool
	ConfigFile string
	ConfigSet  bool // a --config file was given
	// BatchSizeSet says the command line gave a batch size; without one
	// (and none in the --config file) the data set's own applies
	// (fixtures.DefaultBatchSize).
	BatchSizeSet bool
	// Flags applies the command line's settings to the configuration.
	Flags func(*Config) error
}

// Resolve builds the run's configuration, the one place it is defaulted
// and validated (Config.Resolve). With Resume a setting that would change
// the recorded run's config hash is a usage error (CheckResume).
func (s ConfigSources) Resolve() (Config, error) {
	cfg := Defaults()
	var recorded *Config
	var fileKeys map[string]bool // the keys a --config file gives
	switch {
	case s.Resume && s.ConfigSet:
		return cfg, usage.Errorf("--resume restores the configuration recorded in %s; --config does not apply", filepath.Join(s.Out, RunFile))
	case s.ConfigSet:
		var err error
		if cfg, fileKeys, err = LoadConfigFile(s.ConfigFile); err != nil {
			return cfg, err
		}
	case s.Resume:
		var err error
		if cfg, err = RecordedConfig(s.Out); err != nil {
			return cfg, err
		}
		rc := cfg
		recorded = &rc
	}
	if s.Flags != nil {
		if err := s.Flags(&cfg); err != nil {
			return cfg, err
		}
	}
	if recorded == nil && !s.BatchSizeSet && !fileKeys["batch-size"] {
		if b := fixtures.DefaultBatchSize(cfg.Dataset); b > 0 {
			cfg.BatchSize = b
		}
	}
	if recorded != nil {
		if err := CheckResume(*recorded, cfg, s.Out); err != nil {
			return cfg, err
		}
	}
	if cfg.Loss == "" {
		return cfg, usage.Errorf("--loss is required (see dmlbench list losses)")
	}
	resolved, err := cfg.Resolve()
	if err != nil {
		return cfg, usage.Error{Err: err}
	}
	return resolved, nil
}

// LockForResume locks the run directory out that a resumed run continues,
// before its recorded configuration is read: a run still writing it is
// then reported as such, not as a missing or half-written record.
func LockForResume(out string) (*RunLock, error) {
	if st, err := os.Stat(out); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("resume: %s is not a run directory (no run to continue)", out)
	}
	return LockRunDir(out)
}

// InterruptedError says how to continue an interrupted run of out (bin is
// the command's name), or that there is nothing to continue; other errors
// come back as they are.
func InterruptedError(err error, out, bin string) error {
	if !errors.Is(err, ErrInterrupted) {
		return err
	}
	if _, serr := os.Stat(filepath.Join(out, CheckpointFile)); serr != nil {
		return fmt.Errorf("training interrupted before the first checkpoint: nothing to resume; start the run again")
	}
	return fmt.Errorf("%w; continue with: %s run --out %s --resume", err, bin, ShellQuote(out))
}

// ShellQuote quotes s for a POSIX shell when it holds anything but plain
// path characters.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:+=@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
