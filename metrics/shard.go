package metrics

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/knn"
)

// PartialVersion numbers the layout of Partial's per-query terms; a merge
// refuses partials of another version.
const PartialVersion = 1

// Shard is shard Index of Count: a contiguous range of query rows
// (Rows), searched against the whole gallery.
type Shard struct{ Index, Count int }

// Check refuses a shard outside 0 ≤ Index < Count.
func (s Shard) Check() error {
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d/%d: want 0 ≤ index < count", s.Index, s.Count)
	}
	return nil
}

// Rows is the shard's query rows [lo, hi) among n: ⌊i·n/Count⌋ …
// ⌊(i+1)·n/Count⌋. Any boundaries give the same merge: a partial holds
// per-query terms, and Merge sums them in Mean's fixed block order.
func (s Shard) Rows(n int) (lo, hi int) {
	return int(int64(s.Index) * int64(n) / int64(s.Count)), int(int64(s.Index+1) * int64(n) / int64(s.Count))
}

// Partial is one shard's k-NN result: every scored query's term of every
// k-NN metric the settings compute (QueryValues' layout), with what a
// merge needs to check that all partials describe one evaluation.
type Partial struct {
	Version int
	Shard   Shard
	// Lo, Hi: the query rows of the shard (Shard.Rows of the queries).
	Lo, Hi int
	// Inputs are checksums of the data ("queries", "labels",
	// "gallery", "gallery labels", "query rows"; those present; class
	// names only name the output, which is the merge's), Settings the options the terms depend on, by flag name.
	Inputs   map[string]string
	Settings map[string]string
	// Keys, Index, Values: QueryValues' columns for the shard's scored
	// queries, every k-NN value computed (asked or extra).
	Keys   []string
	Index  []int
	Values [][]float64
	// Lone counts lone queries, Padded roth's padded mAP@1000 windows.
	Lone, Padded int
	// Seconds is the wall time of the shard's search and scoring.
	Seconds float64
}

// EvaluateShard searches and scores the query rows of shard sh (k-NN
// metrics only) with the plan of the whole evaluation, for Merge.
// Clustering and whole-embedding metrics are Merge's: they need every
// item at once.
func EvaluateShard(ctx context.Context, in Input, opt Options, sh Shard) (*Partial, error) {
	if err := sh.Check(); err != nil {
		return nil, err
	}
	e, err := newEvalRun(in, opt)
	if err != nil {
		return nil, err
	}
	if !e.w.stage(Retrieval) {
		return nil, inputErr("no k-NN metric asked: a shard scores k-NN metrics (the clustering and whole-embedding ones are computed once, by the merge)")
	}
	t0 := time.Now()
	metric, q, g, err := prepareDistance(opt.Distance, in.Emb, e.gallery, e.loo)
	if err != nil {
		return nil, err
	}
	lo, hi := sh.Rows(q.Rows)
	plan, _, sums, err := e.searchAndScore(ctx, metric, q, g, planExtras{ranged: true, lo: lo, hi: hi})
	if err != nil {
		return nil, err
	}
	qv := plan.record.table(plan, nil, func(int32) string { return "" })
	return &Partial{Version: PartialVersion, Shard: sh, Lo: lo, Hi: hi,
		Inputs: fingerprints(in), Settings: e.settings(plan),
		Keys: qv.Keys, Index: qv.Index, Values: qv.Values, Lone: sums.lone, Padded: sums.padded,
		Seconds: time.Since(t0).Seconds()}, nil
}

// Merge writes the Result Evaluate(ctx, in, opt) writes, bit for bit,
// from the k-NN partials of every shard of one evaluation of in under
// opt (timings aside): each metric is the Mean of the shards' per-query
// terms. in is needed for what is not per-query: the checks, class names,
// and the clustering and whole-embedding metrics, computed here once over
// every item (one k-means, as Evaluate runs it). A partial of another
// input, setting or version, and a missing or duplicated shard, are
// refused by name.
func Merge(ctx context.Context, in Input, opt Options, parts []*Partial) (*Result, error) {
	e, err := newEvalRun(in, opt)
	if err != nil {
		return nil, err
	}
	if !e.w.stage(Retrieval) {
		return nil, inputErr("no k-NN metric asked: there is nothing to merge")
	}
	n := in.Emb.Rows
	if err := checkShards(parts, n); err != nil {
		return nil, err
	}
	t0 := time.Now()
	plan, _, err := e.retrievalPlan(opt.Backend.Searcher, knn.L2, in.Emb, e.gallery, planExtras{ranged: true, hi: n})
	if err != nil {
		return nil, err
	}
	rec := plan.newQueryRecord(0, n)
	if err := e.checkPartials(parts, plan, rec); err != nil {
		return nil, err
	}
	lone, padded, seconds := 0, 0, 0.0
	for _, p := range parts {
		for j := range rec.keys {
			for i, q := range p.Index {
				rec.vals[j][q] = p.Values[j][i]
			}
		}
		lone, padded, seconds = lone+p.Lone, padded+p.Padded, seconds+p.Seconds
	}
	namer := e.classNamer()
	all := rec.table(plan, nil, namer)
	vals := map[string]float64{}
	for j, k := range all.Keys {
		vals[k] = Mean(all.Index, all.Values[j])
	}
	e.retrievalResults(plan, vals, func() ([]int32, []map[string]float64, []int) { return classValuesOf(all) }, lone, padded)
	if opt.PerQuery {
		e.res.PerQuery = rec.table(plan, e.w.asked, namer)
	}
	e.res.Timings["knn"] = seconds // summed over the shards
	e.res.Timings["retrieval_metrics"] = time.Since(t0).Seconds()
	if e.w.stage(Clustering) {
		if err := e.clusteringStage(ctx); err != nil {
			return nil, err
		}
	}
	if err := e.embeddingStage(); err != nil {
		return nil, err
	}
	return e.finish(), nil
}

// classValuesOf is retrievalPlan.classValues from per-query terms: each
// class's metrics (QueryValues.ClassMeans, bit for bit the class sums'),
// classes in dense id order, and its number of scored queries.
func classValuesOf(v *QueryValues) ([]int32, []map[string]float64, []int) {
	var ids []int32
	var vals []map[string]float64
	for j, k := range v.Keys {
		cids, means := v.ClassMeans(j)
		if j == 0 {
			ids = cids
			vals = make([]map[string]float64, len(ids))
			for c := range vals {
				vals[c] = map[string]float64{}
			}
		}
		for c := range cids {
			vals[c][k] = means[c]
		}
	}
	count := map[int32]int{}
	for _, y := range v.Class {
		count[y]++
	}
	queries := make([]int, len(ids))
	for c, y := range ids {
		queries[c] = count[y]
	}
	return ids, vals, queries
}

// checkShards refuses partials that are not exactly shards 0 … N−1 of
// one N over n query rows, naming the missing and duplicated ones.
func checkShards(parts []*Partial, n int) error {
	if len(parts) == 0 {
		return inputErr("no partial results to merge")
	}
	count := parts[0].Shard.Count
	seen := map[int]int{}
	for _, p := range parts {
		if p.Version != PartialVersion {
			return inputErr("partial of shard %d/%d has format version %d; this dmlbench reads version %d (re-run the shard)", p.Shard.Index, p.Shard.Count, p.Version, PartialVersion)
		}
		if p.Shard.Count != count {
			return inputErr("partials of %d and of %d shards cannot be merged (shard %d/%d)", count, p.Shard.Count, p.Shard.Index, p.Shard.Count)
		}
		if err := p.Shard.Check(); err != nil {
			return inputErr("%v", err)
		}
		if lo, hi := p.Shard.Rows(n); p.Lo != lo || p.Hi != hi {
			return inputErr("shard %d/%d holds query rows %d…%d, but of %d queries it would be %d…%d (a partial of other data)", p.Shard.Index, count, p.Lo, p.Hi-1, n, lo, hi-1)
		}
		seen[p.Shard.Index]++
	}
	var missing, dup []string
	for i := range count {
		switch seen[i] {
		case 0:
			missing = append(missing, strconv.Itoa(i))
		case 1:
		default:
			dup = append(dup, strconv.Itoa(i))
		}
	}
	switch {
	case len(dup) > 0:
		return inputErr("shard(s) %s of %d given more than once", strings.Join(dup, ", "), count)
	case len(missing) > 0:
		return inputErr("shard(s) %s of %d missing (not finished, or not given)", strings.Join(missing, ", "), count)
	}
	slices.SortFunc(parts, func(a, b *Partial) int { return a.Shard.Index - b.Shard.Index })
	return nil
}

// checkPartials refuses partials of other inputs or settings than the
// merge's, naming the first difference, and terms that do not cover the
// shard's scored queries exactly.
func (e *evalRun) checkPartials(parts []*Partial, plan *retrievalPlan, rec *queryRecord) error {
	inputs, settings := fingerprints(e.in), e.settings(plan)
	for _, p := range parts {
		who := fmt.Sprintf("shard %d/%d", p.Shard.Index, p.Shard.Count)
		if d := mapDiff(p.Inputs, inputs); d != "" {
			return inputErr("%s was computed on other data: %s differs (partial %s, here %s)", who, d, short(p.Inputs[d]), short(inputs[d]))
		}
		if d := mapDiff(p.Settings, settings); d != "" {
			return inputErr("%s was computed with other settings: %s %q, here %q", who, d, p.Settings[d], settings[d])
		}
		if !slices.Equal(p.Keys, rec.keys) || len(p.Values) != len(p.Keys) {
			return inputErr("%s holds the terms of %s, this merge needs %s", who, strings.Join(p.Keys, ","), strings.Join(rec.keys, ","))
		}
		want := 0
		for q := p.Lo; q < p.Hi; q++ {
			if plan.scored(q) {
				want++
			}
		}
		if len(p.Index) != want {
			return inputErr("%s holds %d queries, its rows have %d", who, len(p.Index), want)
		}
		for i, q := range p.Index {
			if q < p.Lo || q >= p.Hi || !plan.scored(q) || (i > 0 && q <= p.Index[i-1]) {
				return inputErr("%s: query row %d is not one of its rows", who, q)
			}
		}
		for _, col := range p.Values {
			if len(col) != len(p.Index) {
				return inputErr("%s: a column of %d terms for %d queries", who, len(col), len(p.Index))
			}
		}
	}
	return nil
}

// mapDiff returns the first key (sorted) whose values differ in a and b.
func mapDiff(a, b map[string]string) string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		av, aok := a[k]
		bv, bok := b[k]
		if av != bv || aok != bok {
			return k
		}
	}
	return ""
}

func short(digest string) string {
	if digest == "" {
		return "absent"
	}
	return digest[:min(12, len(digest))]
}

// settings are the options a shard's terms depend on, by flag name.
// Threads, averaging, --per-class and --per-query are not among them: they
// do not change a term.
func (e *evalRun) settings(plan *retrievalPlan) map[string]string {
	backend := "exact"
	if e.opt.Backend.Searcher != nil {
		backend = e.opt.Backend.Searcher.Name()
	}
	return map[string]string{
		"--compat":   string(e.conv),
		"--distance": strings.ToLower(e.opt.Distance),
		"--metrics":  strings.Join(Keys(plan.values(plan.newSums())), ","),
		"--pml-k":    strconv.Itoa(plan.extras.pmlK),
		"--backend":  backend,
		"version":    e.res.Version,
	}
}

// fingerprints are checksums of the data of in (digest).
func fingerprints(in Input) map[string]string {
	out := map[string]string{"queries": digestMatrix(in.Emb), "labels": digestInts(in.Labels)}
	if in.Gallery != nil {
		out["gallery"] = digestMatrix(*in.Gallery)
		out["gallery labels"] = digestInts(in.GalleryLabels)
	}
	if in.QueryRows != nil {
		rows := make([]int32, len(in.QueryRows))
		for i, r := range in.QueryRows {
			rows[i] = int32(r)
		}
		out["query rows"] = digestInts(rows)
	}
	return out
}

// digestMatrix checksums the shape and the float32 bits of m (in the byte
// order of this machine: partials are merged where they are computed).
func digestMatrix(m mat32.Matrix) string {
	var shape [16]byte
	binary.LittleEndian.PutUint64(shape[:8], uint64(m.Rows))
	binary.LittleEndian.PutUint64(shape[8:], uint64(m.Cols))
	var data []byte
	if len(m.Data) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&m.Data[0])), 4*len(m.Data))
	}
	return digest(shape[:], data)
}

func digestInts(v []int32) string {
	var data []byte
	if len(v) > 0 {
		data = unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	}
	return digest(nil, data)
}

// digest is the CRC-32C and the CRC-32 (IEEE) of the parts, 16 hex
// digits: a check that partials describe the same data, not a defence
// against forgery, and fast (both in hardware: a 512 MB gallery in tens
// of milliseconds, where SHA-256 takes seconds, once per shard).
func digest(parts ...[]byte) string {
	var c, i uint32
	for _, p := range parts {
		c = crc32.Update(c, castagnoli, p)
		i = crc32.Update(i, crc32.IEEETable, p)
	}
	return fmt.Sprintf("%08x%08x", c, i)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
