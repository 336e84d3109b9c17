package main

import (
	"strings"
	"testing"
)

// A .pt that holds its labels (a dict's "labels", an (embeddings, labels)
// pair) needs no --labels and scores as with them; --compat names its
// values; a misnamed flag gets the nearest one.
func TestEvalInputMessages(t *testing.T) {
	td := "../../fixtures/arrays/testdata/"
	for spec, labels := range map[string]string{"torch_dict.pt": "torch_dict.pt:labels", "torch_list.pt": "torch_list.pt:1"} {
		got, errs, code := runCLI(t, "eval", "--emb", td+spec, "--metrics", "R@1,P@2,mAP@3", "-q")
		want, _, _ := runCLI(t, "eval", "--emb", td+spec, "--labels", td+labels, "--metrics", "R@1,P@2,mAP@3", "-q")
		mask := func(s string) string { return s[:strings.Index(s, "classes,")] }
		if code != 0 || mask(got) != mask(want) {
			t.Errorf("%s without --labels: exit %d %s\n%s\nwant\n%s", spec, code, errs, got, want)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--emb", td + "torch_emb.pt"}, "--labels is required: " + td + "torch_emb.pt holds no labels"},
		{[]string{"--emb", td + "torch_dict.pt", "--compat", "pytorch"}, `--compat "pytorch": want strict, roth, pml or pml3 (pytorch-metric-learning is pml)`},
		{[]string{"--emb", td + "torch_dict.pt", "--compat", "rot"}, "did you mean roth?"},
		{[]string{"--embeddings", td + "torch_dict.pt"}, "did you mean --emb?"},
	} {
		out, errs, code := runCLI(t, append([]string{"eval", "-q"}, c.args...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}
