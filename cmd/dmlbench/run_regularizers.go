package main

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/dmlbench/dmlbench/trainers"
	"github.com/dmlbench/dmlbench/trainers/regularizers"
)

// regularizerFlags copies the regulariser flags given explicitly into cfg
// (--rho-reg, --das, --das-params, --mixup, --mixup-alpha).
func regularizerFlags(c *cli.Context, cfg *trainers.Config) error {
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
