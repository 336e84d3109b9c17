package main

import "github.com/urfave/cli/v2"

// checkEvalNumbers refuses numeric eval flags given with a value outside
// their domain. A flag that is not given takes its default; a given value
// is used as given (--seed 0 is seed 0), never silently replaced.
func checkEvalNumbers(c *cli.Context) error {
	positive := []string{"clusters", "min-samples", "test-time-k", "test-time-kr", "test-time-n"}
	for _, name := range positive {
		if c.IsSet(name) && c.Int(name) < 1 {
			return usagef("--%s %d: must be ≥ 1", name, c.Int(name))
		}
	}
	if c.IsSet("eps") && !(c.Float64("eps") > 0) {
		return usagef("--eps %v: must be positive", c.Float64("eps"))
	}
	if c.Int("threads") < 0 {
		return usagef("--threads %d: must be ≥ 0 (0 = all cores)", c.Int("threads"))
	}
	return nil
}
