package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/internal/record"
	"github.com/dmlbench/dmlbench/knn"
	"github.com/dmlbench/dmlbench/metrics"
	"github.com/dmlbench/dmlbench/trainers"
)

func main() {
	loss := flag.String("loss", "margin", "")
	miner := flag.String("miner", "", "")
	epochs := flag.Int("epochs", 10, "")
	lr := flag.Float64("lr", 1e-3, "")
	hidden := flag.Int("hidden", 512, "")
	sampler := flag.String("sampler", "spc-2", "")
	ds := flag.String("dataset", "omniglot", "")
	evalEvery := flag.Int("eval-every", 5, "")
	embedNorm := flag.String("embed-norm", "l2", "")
	flag.Parse()
	d, err := fixtures.Load(*ds, fixtures.Options{})
	if err != nil {
		panic(err)
	}
	ev := func(ctx context.Context, emb mat32.Matrix, labels []int32) (record.Metrics, error) {
		r, err := metrics.Evaluate(ctx, metrics.Input{Emb: emb, Labels: labels}, metrics.Options{Metrics: []string{"R@1", "NMI", "mAP@C"}, Backend: metrics.Backend{Searcher: knn.BruteForce{}}})
		if err != nil {
			return nil, err
		}
		return record.Metrics(r.Metrics), nil
	}
	raw, _ := ev(context.Background(), d.Test.X, d.Test.Labels)
	cfg := trainers.Config{Loss: *loss, Miner: *miner, Sampler: *sampler, Epochs: *epochs, LR: *lr, Hidden: []int{*hidden}, EvalEvery: *evalEvery, EmbedNorm: *embedNorm}
	run := &record.Run{}
	t0 := time.Now()
	err = trainers.Train(context.Background(), cfg, trainers.Options{
		Train: trainers.Split{X: d.Train.X, Labels: d.Train.Labels}, Test: trainers.Split{X: d.Test.X, Labels: d.Test.Labels}, Evaluate: ev,
	}, run)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var hist []string
	for _, h := range run.History {
		if h.Metrics != nil {
			hist = append(hist, fmt.Sprintf("e%d:%.3f", h.Epoch, h.Metrics["R@1"]))
		}
	}
	f := run.Final
	fmt.Printf("%s/%s lr=%g epochs=%d: raw R@1 %.4f | untrained R@1 %.4f | final R@1 %.4f NMI %.4f mAP@C %.4f | loss %.4f→%.4f | %s | %.1fs (step %.1f ms)\n",
		*loss, *miner, *lr, *epochs, raw["R@1"], run.Initial["R@1"], f["R@1"], f["NMI"], f["mAP@C"], run.History[0].Loss, run.History[len(run.History)-1].Loss,
		strings.Join(hist, " "), time.Since(t0).Seconds(), 1000*run.Timings["step_mean"])
}
