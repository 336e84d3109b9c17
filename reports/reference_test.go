package reports

import (
	"math"
	"strings"
	"testing"

	"github.com/dmlbench/dmlbench/internal/record"
)

// TestRoth2020Transcription spot-checks the shipped table against Roth et al. 2020
// (Roth et al. 2020, supplementary §I): first, last and bold cells of
// Tab. 4, 5 and 6, and the row counts (24, 24 and 22 approaches × 6
// metrics).
func TestRoth2020Transcription(t *testing.T) {
	rows, err := LoadReference("roth2020")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	get := func(table, approach, metric string) RefValue {
		for _, r := range rows {
			if r.Table == table && r.Approach == approach {
				if v, ok := r.Metrics[metric]; ok {
					return v
				}
			}
		}
		t.Fatalf("%s %s %s missing", table, approach, metric)
		return RefValue{}
	}
	for _, r := range rows {
		count[r.Table]++
		if len(r.Metrics) != 6 || r.Source != "Roth et al. 2020" {
			t.Fatalf("row %+v", r)
		}
	}
	if count["Tab. 4"] != 24 || count["Tab. 5"] != 24 || count["Tab. 6"] != 22 {
		t.Fatalf("row counts %v", count)
	}
	for _, c := range []struct {
		table, approach, metric string
		mean, std               float64
	}{
		{"Tab. 4", "Imagenet", "R@1", 43.77, math.NaN()},
		{"Tab. 4", "R-Margin (D, β = 0.6)", "R@1", 64.93, 0.42},
		{"Tab. 4", "Multisimilarity", "NMI", 68.55, 0.38},
		{"Tab. 4", "R-Triplet (D)", "NMI", 67.86, 0.51},
		{"Tab. 5", "Margin (D, β = 1.2)", "mAP@1000", 32.50, 0.28},
		{"Tab. 5", "R-Margin (D, β = 0.6)", "mAP@1000", 34.57, 0.30},
		{"Tab. 6", "Npair", "F1", 35.40, 0.15},
		{"Tab. 6", "R-Margin (D, β = 1.2)", "R@2", 82.95, 0.07},
		{"Tab. 6", "Imagenet", "NMI", 58.64, math.NaN()},
	} {
		v := get(c.table, c.approach, c.metric)
		if v.Mean != c.mean || (math.IsNaN(c.std) != math.IsNaN(v.Std)) || (!math.IsNaN(c.std) && v.Std != c.std) {
			t.Errorf("%s %s %s = %v ± %v, want %v ± %v", c.table, c.approach, c.metric, v.Mean, v.Std, c.mean, c.std)
		}
	}
	if names := PublishedNames(); len(names) != 1 || names[0] != "roth2020" {
		t.Fatalf("published %v", names)
	}
}

func TestParseReferenceErrors(t *testing.T) {
	good := "# c\nsource,table,dataset,approach,metric,mean,std\nS,T,D,\"A, b\",R@1,1.5,\nS,T,D,\"A, b\",NMI,2,0.1\n"
	rows, err := ParseReference(strings.NewReader(good), "x")
	if err != nil || len(rows) != 1 || rows[0].Approach != "A, b" || !math.IsNaN(rows[0].Metrics["R@1"].Std) || rows[0].Metrics["NMI"].Std != 0.1 {
		t.Fatalf("%+v %v", rows, err)
	}
	for _, bad := range []string{
		"",
		"a,b,c,d,e,f,g\n",
		"source,table,dataset,approach,metric,mean,std\nS,T,D,A,R@1,x,\n",
		"source,table,dataset,approach,metric,mean,std\nS,T,D,A,R@1,1,-1\n",
		"source,table,dataset,approach,metric,mean,std\nS,T,,A,R@1,1,\n",
		"source,table,dataset,approach,metric,mean,std\nS,T,D,A,R@1,1,\nS,T,D,A,R@1,2,\n",
		"source,table,dataset,approach,metric,mean,std\nS,T,D,A,R@1\n",
	} {
		if _, err := ParseReference(strings.NewReader(bad), "bad"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if _, err := LoadReference("no/such/file.csv"); err == nil {
		t.Error("missing file accepted")
	}
}

func TestSameDatasetAndVaryingKeys(t *testing.T) {
	for _, c := range [][2]string{{"cub200", "CUB200-2011"}, {"CUB", "CUB200-2011"}, {"cars", "CARS196"}, {"sop", "Stanford Online Products"}, {"Omniglot", "omniglot"}} {
		if !SameDataset(c[0], c[1]) {
			t.Errorf("%q vs %q", c[0], c[1])
		}
	}
	if SameDataset("cub200", "cars196") {
		t.Error("cub = cars")
	}
	mk := func(m map[string]string) LoadedRun { return LoadedRun{Run: &record.Run{Method: m}} }
	runs := []LoadedRun{
		mk(map[string]string{"loss": "margin", "sampler": "spc-2", "arch": "mlp"}),
		mk(map[string]string{"loss": "triplet", "sampler": "spc-2", "arch": "mlp", "miner": "distance"}),
	}
	v, c := VaryingKeys(runs)
	if strings.Join(v, ",") != "loss,miner" || len(c) != 2 || c["sampler"] != "spc-2" || c["arch"] != "mlp" {
		t.Fatalf("varying %v common %v", v, c)
	}
	v, c = VaryingKeys(runs[:1])
	if strings.Join(v, ",") != "loss" || len(c) != 2 {
		t.Fatalf("single run: varying %v common %v", v, c)
	}
}

func TestSetReference(t *testing.T) {
	var opt Options
	if err := opt.SetReference("", "", false); err != nil || opt.References != nil {
		t.Fatalf("no reference: %v", err)
	}
	if err := opt.SetReference("", "a;b", true); err == nil || !strings.Contains(err.Error(), "need --reference") {
		t.Fatalf("filters without a reference: %v", err)
	}
	if err := opt.SetReference(PublishedNames()[0], " a ; b;", false); err != nil || len(opt.References) == 0 || len(opt.ReferenceApproaches) != 2 {
		t.Fatalf("%v: %d rows, approaches %q", err, len(opt.References), opt.ReferenceApproaches)
	}
}
