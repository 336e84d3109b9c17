package suite

import (
	"strings"
	"testing"
)

// A tag names run directories: one that `report` would skip (a leading
// ".") or that Slug would mangle into another name (path parts) is refused
// when the spec is read, like a method name.
func TestTagValidatedLikeMethodNames(t *testing.T) {
	for _, tag := range []string{".hidden", "..", "../../x", "a/b", "-x", "a b", "é"} {
		for _, grid := range []string{
			"{dataset: d, loss: margin, seed: 0, tag: %q}",
			"{dataset: 'dir:data', command: [./train.sh], epochs: 2, seed: 0, tag: %q}",
		} {
			spec := "grids: [" + strings.Replace(grid, "%q", `"`+tag+`"`, 1) + "]"
			_, err := Parse([]byte(spec))
			want := `grid 1: tag "` + tag + `" must be letters, digits and _ . + -`
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want %q", spec, err, want)
			}
		}
	}
	for _, tag := range []string{"proxy", "Proxy_2", "v1.5+aug", "x-y"} {
		if _, err := Parse([]byte(`grids: [{dataset: d, loss: margin, seed: 0, tag: "` + tag + `"}]`)); err != nil {
			t.Errorf("tag %q: %v", tag, err)
		}
	}
}
