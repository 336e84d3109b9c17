package trainers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers/losses"
	"github.com/dmlbench/dmlbench/trainers/miners"
	"github.com/dmlbench/dmlbench/trainers/model"
	"github.com/dmlbench/dmlbench/trainers/samplers"
	"github.com/dmlbench/dmlbench/trainers/testtime"
)

// checkNames refuses a setting that names nothing this binary knows: the
// data set, the architecture, the loss, miner and sampler (their
// registries), the convention, the evaluation distance, the k-NN backend,
// the metrics, the select-by metric and the test-time mode. The
// error names the nearest known name (suggest.Unknown) and wraps
// suggest.ErrUnknown, so that a typo stops the run where the config is
// resolved, before anything trains or any run.json is written. A backend
// that is known but not in this binary (faiss without -tags faiss) is the
// run's error, not this one's.
func (c Config) checkNames() error {
	checks := []struct {
		value string
		check func(string) error
	}{
		{c.Dataset, func(v string) error {
			if strings.HasPrefix(v, "dir:") {
				return nil
			}
			return suggest.Check("dataset", v, fixtures.Names(), false)
		}},
		{c.Arch, func(v string) error { return suggest.Check("architecture", v, model.Names(), false) }},
		{c.Loss, func(v string) error { return suggest.Check("loss", v, losses.Names(), false) }},
		{c.Miner, func(v string) error { return suggest.Check("miner", v, miners.Names(), false) }},
		{c.Sampler, func(v string) error { return suggest.Check("sampler", v, samplers.Names(), true) }},
		{c.Convention, func(v string) error {
			_, err := metrics.ParseConvention(v)
			if err != nil {
				return fmt.Errorf("convention %q: %w", v, err)
			}
			return nil
		}},
		{c.Distance, metrics.CheckDistance},
		{c.Backend, func(v string) error {
			if _, err := metrics.Backends.Get(v); errors.Is(err, suggest.ErrUnknown) {
				return err
			}
			return nil
		}},
		{c.SelectBy, metrics.CheckName},
		{strings.ToLower(c.TestTime), func(v string) error { return suggest.Check("test-time mode", v, testtime.Modes, false) }},
	}
	for _, m := range c.Metrics {
		checks = append(checks, struct {
			value string
			check func(string) error
		}{m, metrics.CheckName})
	}
	for _, ch := range checks {
		if ch.value == "" {
			continue // derived or none (Validate's other checks)
		}
		if err := ch.check(ch.value); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	return nil
}
