package trainers

import "math"

// StepDecay is the step learning-rate schedule: the factor applied during
// epoch e (0-based) is γ^|{s ∈ Steps : s ≤ e}|, i.e. the rate is multiplied
// by γ after each listed epoch count (torch MultiStepLR with milestones
// Steps, as in Roth et al. 2020's training protocol).
type StepDecay struct {
	Steps []int
	Gamma float64
}

// Factor returns the multiplier for 0-based epoch e.
func (s StepDecay) Factor(e int) float64 {
	n := 0
	for _, m := range s.Steps {
		if m <= e {
			n++
		}
	}
	return math.Pow(s.Gamma, float64(n))
}
