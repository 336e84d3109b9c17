package compare

import (
	"math/rand/v2"
	"testing"
)

// systemsTerms draws one replicate of nsys systems scored on the same
// classes: each class has an effect shared by all systems (the classes
// are not alike) and each system its own noise; system s adds shift[s].
// The family is every system after the first against the first, as
// compare --emb A --emb B --emb C … tests it.
func systemsTerms(rng *rand.Rand, nsys, classes int, shift []float64) []classTerms {
	x := make([][]float64, nsys)
	effect := make([]float64, classes)
	for c := range effect {
		effect[c] = rng.NormFloat64() * 2
	}
	for s := range x {
		x[s] = make([]float64, classes)
		for c := range x[s] {
			x[s][c] = effect[c] + rng.NormFloat64() + shift[s]
		}
	}
	var fam []classTerms
	for s := 1; s < nsys; s++ {
		var ct classTerms
		for c := range classes {
			ct.num = append(ct.num, x[s][c]-x[0][c])
			ct.den = append(ct.den, 1)
			ct.class = append(ct.class, int32(c))
		}
		fam = append(fam, ct)
	}
	return fam
}

// The max-T family-wise error rate: 10 identical systems (9 tests against
// the first), 2000 replicates; the share of replicates with any adjusted
// p < 0.05 must stay ≤ 0.05 within Monte Carlo error (3 standard errors,
// 0.065), while the uncorrected tests reject somewhere far more often.
// Power: one system better by 0.8 noise standard deviations is found in
// most replicates.
func TestMaxTFamilyWiseError(t *testing.T) {
	const reps, nsys, classes = 2000, 10, 30
	rng := rand.New(rand.NewPCG(7, 7))
	opt := Options{Resamples: 300, Level: 0.95}
	anyAdj, anyRaw := 0, 0
	for r := range reps {
		opt.Seed = uint64(r + 1)
		fam := systemsTerms(rng, nsys, classes, make([]float64, nsys))
		adj := maxTP(fam, opt)
		a, raw := false, false
		for h, ct := range fam {
			a = a || adj[h] < 0.05
			raw = raw || signFlipP(ct, opt) < 0.05
		}
		if a {
			anyAdj++
		}
		if raw {
			anyRaw++
		}
	}
	fwer, rawRate := float64(anyAdj)/reps, float64(anyRaw)/reps
	t.Logf("10 identical systems, %d replicates: family-wise error max-T %.3f, uncorrected %.3f", reps, fwer, rawRate)
	if fwer > 0.065 {
		t.Errorf("max-T family-wise error %.3f > 0.05 (+3 SE)", fwer)
	}
	if rawRate < 0.2 {
		t.Errorf("uncorrected tests reject somewhere in %.3f of replicates: the simulation does not show the multiplicity", rawRate)
	}
	found := 0
	shift := make([]float64, nsys)
	shift[3] = 0.8
	for r := range 200 {
		opt.Seed = uint64(r + 1000)
		adj := maxTP(systemsTerms(rng, nsys, classes, shift), opt)
		if adj[2] < 0.05 { // system 3 is test 2 (systems 1… against 0)
			found++
		}
	}
	power := float64(found) / 200
	t.Logf("power: one system better by 0.8 noise SD over 30 classes, found in %.3f of 200 replicates", power)
	if power < 0.5 {
		t.Errorf("max-T power %.3f: want ≥ 0.5", power)
	}
}

// max-T p-values are never below the marginal sign-flip p-values, equal
// them for a family of one (up to the generators' draws), and are 1 for a
// test whose differences are all 0.
func TestMaxTBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	opt := Options{Resamples: 2000, Seed: 3, Level: 0.95}
	fam := systemsTerms(rng, 4, 20, []float64{0, 0.5, 0, 0})
	fam = append(fam, classTerms{num: make([]float64, 20), den: make([]float64, 20), class: fam[0].class})
	adj := maxTP(fam, opt)
	for h, ct := range fam {
		if p := signFlipP(ct, opt); adj[h] < p-0.03 {
			t.Errorf("test %d: max-T p %.4f below the marginal p %.4f", h, adj[h], p)
		}
	}
	if adj[len(adj)-1] != 1 {
		t.Errorf("all-zero differences: p %v, want 1", adj[len(adj)-1])
	}
	one := maxTP(fam[:1], opt)[0]
	if p := signFlipP(fam[0], opt); one < p-0.03 || one > p+0.03 {
		t.Errorf("family of one: max-T p %.4f, marginal %.4f", one, p)
	}
}
