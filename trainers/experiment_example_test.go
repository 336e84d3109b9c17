package trainers_test

import (
	"context"
	"fmt"
	"os"

	"github.com/dmlbench/dmlbench/trainers"
)

// A run from Go: start from Defaults (the values `dmlbench run` shows),
// change what the experiment needs, and run it in a directory.
func ExampleRunExperiment() {
	dir, _ := os.MkdirTemp("", "run")
	defer os.RemoveAll(dir)
	cfg := trainers.Defaults()
	cfg.Dataset, cfg.Loss, cfg.Sampler = "synthetic", "margin", "spc-4"
	cfg.Epochs, cfg.ItersPerEpoch, cfg.BatchSize, cfg.Metrics = 1, 2, 32, []string{"R@1"}
	run, err := trainers.RunExperiment(context.Background(), cfg, dir, trainers.ExperimentOptions{Version: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(run.Status, len(run.History), run.Method["miner"])
	// Output: done 1 none
}
