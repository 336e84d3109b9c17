package samplers

import (
	"math/rand"
	"reflect"
	"testing"
)

func labelsOf(classes, per int) []int32 {
	var l []int32
	for c := 0; c < classes; c++ {
		for j := 0; j < per; j++ {
			l = append(l, int32(c))
		}
	}
	return l
}

func TestSPCComposition(t *testing.T) {
	labels := labelsOf(20, 10)
	for _, k := range []int{2, 4, 8} {
		s, err := New("SPC-" + string(rune('0'+k)))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := s.Batches(labels, 32, 5, rand.New(rand.NewSource(1)))
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != 5 {
			t.Fatalf("got %d batches", len(bs))
		}
		for _, b := range bs {
			if len(b) != 32 {
				t.Fatalf("batch of %d", len(b))
			}
			count := map[int32]int{}
			seen := map[int]bool{}
			for _, i := range b {
				count[labels[i]]++
				if seen[i] {
					t.Fatalf("spc-%d: index %d twice in a batch", k, i)
				}
				seen[i] = true
			}
			for c, n := range count {
				if n != k {
					t.Fatalf("spc-%d: class %d has %d samples", k, c, n)
				}
			}
		}
	}
}

func TestSPCRAndShortBatches(t *testing.T) {
	labels := labelsOf(30, 10)
	bs, err := SPC{Random: true, MinK: 2, MaxK: 8}.Batches(labels, 50, 20, rand.New(rand.NewSource(3)))
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int]bool{}
	for _, b := range bs {
		if len(b) != 50 {
			t.Fatalf("batch of %d", len(b))
		}
		count := map[int32]int{}
		for _, i := range b {
			count[labels[i]]++
		}
		for _, n := range count {
			sizes[n] = true
			if n > 8 {
				t.Fatalf("class with %d samples", n)
			}
		}
	}
	if len(sizes) < 4 {
		t.Fatalf("spc-r produced only class sizes %v", sizes)
	}
	// Few classes with few items: classes repeat and items are reused, batch still full.
	small := labelsOf(2, 3)
	bs, err = SPC{K: 4}.Batches(small, 12, 2, rand.New(rand.NewSource(1)))
	if err != nil || len(bs[0]) != 12 {
		t.Fatalf("small set: %v %v", bs, err)
	}
}

func TestRandomCoversEachPass(t *testing.T) {
	labels := labelsOf(5, 4) // 20 items
	bs, err := Random{}.Batches(labels, 5, 4, rand.New(rand.NewSource(9)))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, b := range bs {
		for _, i := range b {
			seen[i] = true
		}
	}
	if len(seen) != 20 {
		t.Fatalf("one pass covered %d of 20 items", len(seen))
	}
}

// TestDeterministicAndErrors iterates the registry, so a new sampler is
// checked without a line of this file changing (docs/extending.md): it
// has a summary, gives iters batches of exactly batchSize indices
// into the training set, the same batches for the same seed, and refuses
// an empty set and a zero batch size.
func TestDeterministicAndErrors(t *testing.T) {
	labels := labelsOf(10, 6)
	for _, info := range All() {
		s := info.New()
		if es, ok := s.(EmbeddingSampler); ok {
			if err := es.Refresh(randEmb(len(labels), 4, 1)); err != nil {
				t.Fatal(err)
			}
		}
		a, err := s.Batches(labels, 16, 3, rand.New(rand.NewSource(4)))
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != 3 {
			t.Fatalf("%s: %d batches, want 3", info.Name, len(a))
		}
		for _, batch := range a {
			if len(batch) != 16 {
				t.Fatalf("%s: batch of %d, want 16", info.Name, len(batch))
			}
			for _, i := range batch {
				if i < 0 || i >= len(labels) {
					t.Fatalf("%s: index %d outside the %d samples", info.Name, i, len(labels))
				}
			}
		}
		if info.Summary == "" {
			t.Fatalf("%s: no summary", info.Name)
		}
		b, _ := s.Batches(labels, 16, 3, rand.New(rand.NewSource(4)))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: same seed, different batches", info.Name)
		}
		if _, err := s.Batches(nil, 16, 3, rand.New(rand.NewSource(4))); err == nil {
			t.Fatalf("%s: empty set accepted", info.Name)
		}
		if _, err := s.Batches(labels, 0, 3, rand.New(rand.NewSource(4))); err == nil {
			t.Fatalf("%s: batch 0 accepted", info.Name)
		}
	}
	if _, err := New("no-such-sampler"); err == nil {
		t.Fatal("unknown sampler accepted")
	}
	names := map[string]bool{}
	for _, i := range All() {
		names[i.Name] = true
	}
	for _, n := range []string{"random", "spc-2", "spc-4", "spc-8", "spc-r", "ddm", "frd", "gc", "gc-d2"} {
		if !names[n] {
			t.Fatalf("sampler %s not registered", n)
		}
	}
}
