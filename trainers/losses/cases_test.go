package losses

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// lossCases is what a loss's own test file (NAME_test.go) declares, from its
// init, for the tests that run over every registered loss:
type lossCases struct {
	sphere bool // the expected Info.Sphere (TestRegistry)
	// grad are TestGradients' finite-difference checks, at the defaults and
	// at other hyper-parameters.
	grad []gradCase
	// ref are TestReferenceValues' hand-computed values, on refBatch with the
	// triplets refTriplets unless refBatch is set.
	ref      []refCase
	refBatch func() Batch
	// trainLR is TestLossesTrain's learning rate: the largest of 0.003–0.3
	// that trains stably.
	trainLR float64
	// bad are configurations New must refuse (TestBadHyper).
	bad []Config
	// ownTests: the loss needs a backbone or a teacher, and its file's own
	// tests check its gradients and training instead of grad, ref and
	// trainLR.
	ownTests bool
}

// casesOf holds the lossCases of every loss by name.
var casesOf = map[string]lossCases{}

// addCases registers the test cases of the loss name; called from the init
// of its test file.
func addCases(name string, c lossCases) {
	if _, dup := casesOf[name]; dup {
		panic(fmt.Sprintf("test cases of loss %s added twice", name))
	}
	casesOf[name] = c
}

// caseNames lists the losses with test cases, sorted.
func caseNames() []string {
	names := make([]string, 0, len(casesOf))
	for n := range casesOf {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// TestEveryLossHasCases: every registered loss has its test file's cases
// (or its own tests), and every case names a registered loss.
func TestEveryLossHasCases(t *testing.T) {
	for _, info := range All() {
		c, ok := casesOf[info.Name]
		switch {
		case !ok:
			t.Errorf("%s has no test cases: add them from %s_test.go (docs/extending.md)", info.Name, strings.ReplaceAll(info.Name, "-", ""))
		case c.ownTests:
		case len(c.grad) == 0:
			t.Errorf("%s has no gradient check", info.Name)
		case len(c.ref) == 0:
			t.Errorf("%s has no hand-computed reference value", info.Name)
		case c.trainLR == 0:
			t.Errorf("%s has no training case", info.Name)
		}
	}
	for _, name := range caseNames() {
		if _, ok := Lookup(name); !ok {
			t.Errorf("test cases for the unregistered loss %q", name)
		}
	}
}
