package metrics

import (
	"encoding/json"

	"github.com/dmlbench/dmlbench/internal/record"
)

// MarshalJSON writes Result with its metric maps under record.Metrics's
// policy (the one of run.json): an undefined metric (NaN, a mean over no
// query) is null and an infinite one (ρ of a rank-deficient embedding) the
// string "+Inf", so stdout, --out files and run.json carry the same values.
func (r *Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		*plain
		Metrics record.Metrics `json:"metrics"`
		Extra   record.Metrics `json:"extra,omitempty"`
	}{(*plain)(r), record.Metrics(r.Metrics), record.Metrics(r.Extra)})
}
