package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/internal/suggest"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/reports"
)

// evalChoices are eval's named choices, each resolved and checked once
// before any file is read: the convention, the backend (searcher and
// k-means) and the clustering that replaces its k-means, if any.
type evalChoices struct {
	conv       metrics.Convention
	backend    metrics.Backend
	clustering metrics.KMeansFunc
}

// resolveEvalChoices resolves --compat, --distance, --backend and
// --clustering, and checks the names of --metrics; a misspelt name is a
// usage error naming the nearest one.
func resolveEvalChoices(c *cli.Context) (evalChoices, error) {
	var ch evalChoices
	conv, err := metrics.ParseConvention(c.String("compat"))
	if err != nil {
		return ch, usagef("--compat %q: %v", c.String("compat"), err)
	}
	ch.conv = conv
	if err := metrics.CheckDistance(c.String("distance")); err != nil {
		return ch, usagef("--distance: %v", err)
	}
	for _, m := range reports.SplitList(c.String("metrics"), ",") {
		if err := metrics.CheckName(m); errors.Is(err, suggest.ErrUnknown) {
			return ch, usagef("--metrics: %v", err)
		}
	}
	if ch.backend, err = openBackend(c.String("backend"), conv, c.Int("threads"), c.App.ErrWriter); err != nil {
		return ch, err
	}
	ch.clustering, err = metrics.ClusterFunc(c.String("clustering"), c.Int("threads"), c.Float64("eps"), c.Int("min-samples"), ch.backend.Searcher)
	return ch, err
}
