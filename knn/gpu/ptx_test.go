package gpu

import (
	"regexp"
	"strings"
	"testing"
)

// TestEmbeddedPTX: the embedded PTX has every kernel the driver code looks
// up, targets sm_80, and keeps the exactness guarantees of kernels.cu: only
// explicitly rounded float operations (an unrounded add.f32 or mul.f32 may
// be contracted into an FMA by ptxas) and no flush-to-zero.
func TestEmbeddedPTX(t *testing.T) {
	ptx := string(kernelsPTX)
	for _, k := range []string{"dist_filter", "merge_topk", "watch_keys", "watch_sort", "watch_shrink", "assign_argmin"} {
		if !strings.Contains(ptx, ".entry "+k+"(") {
			t.Errorf("kernel %s missing from kernels.ptx (run go generate)", k)
		}
	}
	if !strings.Contains(ptx, ".target sm_80") {
		t.Error("kernels.ptx does not target sm_80")
	}
	if m := regexp.MustCompile(`\b(add|sub|mul|fma)\.(ftz\.)?f32\b`).FindString(ptx); m != "" {
		t.Errorf("kernels.ptx has an unrounded float operation %q", m)
	}
	if strings.Contains(ptx, ".ftz") {
		t.Error("kernels.ptx flushes subnormals to zero")
	}
	if !strings.Contains(ptx, "fma.rn.f32") {
		t.Error("kernels.ptx has no fma.rn.f32")
	}
}

// TestPTXGeneratedHeader: kernels.ptx opens with Go's generated-code line
// (gen.go's second go:generate step), so tools and readers treat it as
// generated, not source.
func TestPTXGeneratedHeader(t *testing.T) {
	first, _, _ := strings.Cut(string(kernelsPTX), "\n")
	if !regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`).MatchString(first) {
		t.Fatalf("kernels.ptx's first line %q is not a generated-code header (run go generate ./knn/gpu)", first)
	}
}
