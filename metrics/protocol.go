package metrics

import (
	"fmt"
	"sort"
)

// Protocol is a standard benchmark's evaluation: its recall ks and the
// size of its test split, to warn when the files scored differ from it.
type Protocol struct {
	Name string
	Ks   []int
	// QueryGallery: queries search a separate gallery (In-Shop).
	QueryGallery bool
	// N is the leave-one-out split's size; Queries and Gallery the
	// query/gallery split's.
	N, Queries, Gallery int
	What                string
}

// protocols are the recall ks and test splits as the deep-metric-learning
// literature reports them (Oh Song et al. 2016 for CUB-200-2011, Cars196
// and Stanford Online Products; Liu et al. 2016 for In-Shop's
// query/gallery split).
var protocols = []Protocol{
	{Name: "cub", Ks: []int{1, 2, 4, 8}, N: 5924, What: "CUB-200-2011 test classes 101–200"},
	{Name: "cars", Ks: []int{1, 2, 4, 8}, N: 8131, What: "Cars196 test classes 99–196"},
	{Name: "sop", Ks: []int{1, 10, 100, 1000}, N: 60502, What: "Stanford Online Products test split"},
	{Name: "inshop", Ks: []int{1, 10, 20, 30, 40, 50}, QueryGallery: true, Queries: 14218, Gallery: 12612, What: "In-Shop query/gallery split"},
}

// LookupProtocol returns the protocol name (lower case) names.
func LookupProtocol(name string) (Protocol, bool) {
	for _, p := range protocols {
		if p.Name == name {
			return p, true
		}
	}
	return Protocol{}, false
}

// ProtocolNames lists the protocols' names, sorted.
func ProtocolNames() []string {
	var names []string
	for _, p := range protocols {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// Warning says when res was not computed on the protocol's test split
// ("" when the sizes match): its numbers are then not comparable with
// published ones.
func (p Protocol) Warning(res *Result) string {
	if p.QueryGallery {
		if res.Queries != p.Queries || res.Gallery != p.Gallery {
			return fmt.Sprintf("--protocol %s: %d queries and a gallery of %d, but the %s has %d and %d: numbers are not comparable with published ones", p.Name, res.Queries, res.Gallery, p.What, p.Queries, p.Gallery)
		}
		return ""
	}
	if res.N != p.N {
		return fmt.Sprintf("--protocol %s: %d items, but the %s has %d: numbers are not comparable with published ones", p.Name, res.N, p.What, p.N)
	}
	return ""
}
