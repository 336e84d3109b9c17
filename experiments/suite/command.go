package suite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// commandJobs expands a grid whose trainer is a command (Grid.Command,
// docs/external.md): one `dmlbench external-cell` per data set, seed,
// embed-dim and batch-size; Params, embed-dim and batch-size are handed
// to the command. Its data sets are dir:PATH, relative to the suite file.
func (s *Spec) commandJobs(gi int, g Grid, out string, epochs int, add func(Job, string) error) error {
	wd, err := filepath.Abs(s.Dir)
	if err != nil {
		return err
	}
	name := g.Tag
	if name == "" {
		name = "command"
	}
	for _, seed := range g.Seed {
		for _, ds := range g.Dataset {
			for _, ed := range orEmpty(g.EmbedDim) {
				for _, bs := range orEmpty(g.BatchSize) {
					params := map[string]any{}
					for k, v := range g.Params {
						params[k] = v
					}
					method := map[string]string{"method": name}
					for _, a := range []struct{ key, v string }{{"embed-dim", ed}, {"batch-size", bs}} {
						if a.v != "" {
							n, _ := strconv.Atoi(a.v)
							params[a.key] = n
							method[strings.ReplaceAll(a.key, "-", "_")] = a.v
						}
					}
					pj, err := json.Marshal(params)
					if err != nil {
						return fmt.Errorf("grid %d: params: %w", gi+1, err)
					}
					run := RunName(ds, name, "", "", "", ed, bs, "", seed)
					dir := filepath.Join(out, run)
					data := s.resolve(strings.TrimPrefix(ds, "dir:"))
					if abs, err := filepath.Abs(data); err == nil {
						data = abs
					}
					cj, _ := json.Marshal([]string(g.Command))
					args := []string{"external-cell", "--dir", dir, "--command", string(cj), "--dataset", ds, "--data", data, "--workdir", wd,
						"--seed", seed, "--epochs", strconv.Itoa(epochs), "--params", string(pj)}
					keys := make([]string, 0, len(method))
					for k := range method {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						args = append(args, "--method", k+"="+method[k])
					}
					sd, _ := strconv.ParseInt(seed, 10, 64)
					j := Job{Kind: Train, Name: run, Dir: dir, Args: args, Dataset: ds, Method: method, Seed: sd}
					if err := add(j, fmt.Sprintf("grid %d (command %s) seed %s", gi+1, name, seed)); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// checkCommandGrid adds the problems of a command grid to p.
func checkCommandGrid(where string, g Grid, epochs int, epochsSet bool, p *Problems) {
	if len(g.Loss) > 0 || len(g.Miner) > 0 || len(g.Sampler) > 0 || len(g.Regularizer) > 0 || len(g.Extra) > 0 {
		p.Add("%s: a command grid trains with its own program; give its settings in params, not loss, miner, sampler, regularizer or extra", where)
	}
	if !epochsSet || epochs < 1 {
		p.Add("%s: a command grid needs epochs ≥ 1", where)
	}
	for _, ds := range g.Dataset {
		if !strings.HasPrefix(ds, "dir:") {
			p.Add("%s: a command grid's dataset is dir:PATH (label files train_labels.npy, test_labels.npy), not %q", where, ds)
		}
	}
	if len(g.Command) == 0 || g.Command[0] == "" {
		p.Add("%s: empty command", where)
	}
}
