// Package record defines run.json, the versioned file every training or
// evaluation run writes and every report reads. Field names are stable; a
// breaking change bumps SchemaVersion.
package record

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
)

// SchemaVersion of run.json written by this build.
const SchemaVersion = 1

// Metrics maps metric keys (exactly those of `eval --format json`:
// "R@1", "NMI", "F1", "mAP@C", "mAP@1000", "MAP@R", ...) to values.
type Metrics map[string]float64

// Epoch is one row of the training history.
type Epoch struct {
	Epoch     int     `json:"epoch"`
	Loss      float64 `json:"loss"` // NaN when unknown or not finite (null in JSON)
	Seconds   float64 `json:"seconds"`
	Metrics   Metrics `json:"metrics,omitempty"`     // test metrics when evaluated this epoch
	ValMetric Metrics `json:"val_metrics,omitempty"` // validation metrics (split of training classes)
}

// Run is the content of run.json.
type Run struct {
	Schema    int               `json:"schema"`
	Version   string            `json:"version"` // dmlbench version
	Name      string            `json:"name"`    // run directory name
	Dataset   string            `json:"dataset"`
	Method    map[string]string `json:"method"` // loss, miner, sampler, regularizer, ... (report group-by keys)
	Seed      int64             `json:"seed"`
	Config    json.RawMessage   `json:"config,omitempty"` // full config as given
	Versions  map[string]string `json:"versions,omitempty"`
	Status    string            `json:"status"` // "running", "done", "failed"
	Initial   Metrics           `json:"initial,omitempty"`
	Final     Metrics           `json:"final,omitempty"`
	Best      Metrics           `json:"best,omitempty"`
	BestEpoch int               `json:"best_epoch,omitempty"`
	History   []Epoch           `json:"history,omitempty"`
	// Spectrum holds the sorted singular values of the final test embeddings.
	Spectrum []float64          `json:"spectrum,omitempty"`
	Timings  map[string]float64 `json:"timings,omitempty"` // seconds
	// SelectBy is the validation metric that chose BestEpoch (training runs
	// with a validation split; Best holds the test metrics of that epoch):
	// the setting select-by, under schema 1's snake_case name (the one
	// table of such names: docs/run-json.md, "Key styles").
	SelectBy string `json:"select_by,omitempty"`
	// BestVal holds the validation metrics of BestEpoch.
	BestVal Metrics `json:"best_val,omitempty"`
	// FinalRefined holds the test metrics of the final embeddings after
	// test-time refinement (`dmlbench run --test-time`, Seidenschwarz et al. 2021 §3: every
	// sample's embedding replaced by its MPN output in a batch built around
	// it); Final stays the backbone-only score.
	FinalRefined Metrics `json:"final_refined,omitempty"`
}

// WriteAtomic writes v as JSON (MarshalJSON: indented, NaN as null) to
// path with atomicfile.WriteBytes: atomically and durably, through symbolic
// links, never over a directory or device.
func WriteAtomic(path string, v any) error {
	b, err := MarshalJSON(v)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteBytes(path, b)
}

// Read loads a run.json.
func Read(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if r.Schema > SchemaVersion {
		return nil, fmt.Errorf("read %s: schema %d is newer than this dmlbench understands (%d)", path, r.Schema, SchemaVersion)
	}
	return &r, nil
}
