package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/reports"
	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// regularizerFlags applies the suite's --regularizer shorthand to cfg; the
// regulariser settings' own flags (--rho-reg, --das, …), bound from
// trainers.Config, are applied after it and win.
func regularizerFlags(c *cli.Context, cfg *trainers.Config) error {
	if c.IsSet("regularizer") {
		// The suite's "regularizer" axis: a comma list of none, rho[=P], das, mixup.
		for _, r := range reports.SplitList(c.String("regularizer"), ",") {
			name, val, hasVal := strings.Cut(r, "=")
			switch {
			case name == "none" && !hasVal:
			case name == "rho":
				cfg.RhoReg = regularizers.DefaultRhoP
				if hasVal {
					p, err := strconv.ParseFloat(val, 64)
					if err != nil || p <= 0 || p >= 1 {
						return usagef("--regularizer %s: p_switch must be a number in (0, 1)", r)
					}
					cfg.RhoReg = p
				}
			case name == "das" && !hasVal:
				cfg.DAS = true
			case name == "mixup" && !hasVal:
				cfg.Mixup = true
			default:
				return usagef("--regularizer: unknown %q (want none, rho[=P], das, mixup)", r)
			}
		}
	}
	return nil
}
