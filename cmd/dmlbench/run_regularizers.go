package main

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// regularizerFlags copies the regulariser flags given explicitly into cfg
// (--rho-reg, --das, --das-params, --mixup, --mixup-alpha).
func regularizerFlags(c *cli.Context, cfg *trainers.Config) error {
	if c.IsSet("regularizer") {
		// The suite's "regularizer" axis: a comma list of none, rho[=P], das, mixup.
		for _, r := range splitList(c.String("regularizer")) {
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
	if c.IsSet("rho-reg") {
		cfg.RhoReg = c.Float64("rho-reg")
	}
	if c.IsSet("das") {
		cfg.DAS = c.Bool("das")
	}
	if c.IsSet("das-params") {
		p, err := regularizers.ParseDASParams(c.String("das-params"))
		if err != nil {
			return usagef("--das-params: %v", err)
		}
		cfg.DASParams = &p
	}
	if c.IsSet("mixup") {
		cfg.Mixup = c.Bool("mixup")
	}
	if c.IsSet("mixup-alpha") {
		cfg.MixupAlpha = c.Float64("mixup-alpha")
	}
	return nil
}

// regularizerMethod adds the regularisers of a (defaulted) config to the
// run.json method keys, so `dmlbench report --group-by` separates e.g.
// margin from R-margin: rho-reg=p, das=T=…,K=…, mixup=α, simix=1.
func regularizerMethod(cfg trainers.Config, m map[string]string) {
	if cfg.RhoReg > 0 {
		m["rho-reg"] = strconv.FormatFloat(cfg.RhoReg, 'g', -1, 64)
	}
	if cfg.DAS && cfg.DASParams != nil {
		m["das"] = cfg.DASParams.String()
	}
	if cfg.Mixup {
		m["mixup"] = strconv.FormatFloat(cfg.MixupAlpha, 'g', -1, 64)
	}
	if cfg.Hyper["simix"] == 1 {
		m["simix"] = "1"
	}
}
