package metrics

import (
	"context"
	"errors"
)

// Evaluate computes the requested metrics. (Being written.)
func Evaluate(ctx context.Context, in Input, opt Options) (*Result, error) {
	return nil, errors.New("metrics: Evaluate not yet implemented")
}
