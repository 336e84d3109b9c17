package tune

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
)

// Repeats are the plans of search repeats 1 … search-repeats−1: the
// tuning stage of the spec again, with the same training seed but each
// method's search drawing from another stream, under OUT/repeats/rN. They
// have no final stage; they measure whether the methods' order on
// validation survives a different search (repeat 0 is p itself).
func (p *Plan) Repeats() []*Plan {
	var out []*Plan
	for r := 1; r < p.Spec.SearchRepeats; r++ {
		out = append(out, &Plan{Spec: p.Spec, Out: RepeatDir(p.Out, r), Warn: p.Warn, Repeat: r})
	}
	return out
}

// TotalCells counts the cells of the plan and of its search repeats
// (which have tuning cells only).
func (p *Plan) TotalCells() int {
	return p.NumCells() + (p.Spec.SearchRepeats-1)*p.tuneCells()
}

// RepeatDir is the output directory of search repeat r ≥ 1 under out.
func RepeatDir(out string, r int) string {
	return filepath.Join(out, "repeats", fmt.Sprintf("r%d", r))
}

// searchSeed is method m's search stream in repeat p.Repeat (repeat 0:
// the stream of a spec without repeats).
func (p *Plan) searchSeed(m int) int64 {
	seed := methodSeed(p.Spec.Seed, p.Spec.Methods[m].Name)
	if p.Repeat > 0 {
		seed = methodSeed(seed, fmt.Sprintf("search repeat %d", p.Repeat))
	}
	return seed
}

// Ranks ranks the methods by best validation score (1 = best; a method
// without a successful trial ranks last; ties share the better rank).
func Ranks(best []float64, lower bool) []int {
	key := func(i int) float64 {
		v := best[i]
		switch {
		case math.IsNaN(v):
			return math.Inf(1)
		case lower:
			return v
		}
		return -v
	}
	idx := make([]int, len(best))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return key(idx[a]) < key(idx[b]) })
	ranks := make([]int, len(best))
	for r, i := range idx {
		ranks[i] = r + 1
		if r > 0 && key(i) == key(idx[r-1]) {
			ranks[i] = ranks[idx[r-1]]
		}
	}
	return ranks
}

// summarizeRepeats fills each method's best score and rank per search
// repeat (repeat 0 first) and whether its rank holds across them.
func (p *Plan) summarizeRepeats(sum *Summary) error {
	n := p.Spec.SearchRepeats
	if n < 2 {
		return nil
	}
	plans := append([]*Plan{p}, p.Repeats()...)
	lower := p.Spec.lowerIsBetter()
	for _, rp := range plans {
		best := make([]float64, len(p.Spec.Methods))
		for m := range p.Spec.Methods {
			tr, err := rp.trials(m)
			if err != nil {
				return err
			}
			best[m] = math.NaN()
			if b, ok := Best(tr, lower); ok {
				best[m] = float64(b.Score)
			}
		}
		for m, r := range Ranks(best, lower) {
			ms := &sum.Methods[m]
			ms.RepeatBest = append(ms.RepeatBest, Value(best[m]))
			ms.RepeatRanks = append(ms.RepeatRanks, r)
		}
	}
	for m := range sum.Methods {
		ms := &sum.Methods[m]
		holds := true
		for _, r := range ms.RepeatRanks {
			holds = holds && r == ms.RepeatRanks[0]
		}
		ms.RankHolds = &holds
	}
	sum.SearchRepeats = n
	return nil
}
