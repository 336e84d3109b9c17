package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"evl", "eval", 1}, {"kitten", "sitting", 3}, {"abc", "", 3}, {"plto", "plot", 2}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"epochs", "extra", "grid", "grids", "triplet", "distance", "hidden"}
	for _, c := range []struct{ in, want string }{
		{"epoch", "epochs"}, {"tripplet", "triplet"}, {"distanse", "distance"}, {"hiden", "hidden"},
		{"Grid", "grid"}, {"zzz", ""}, {"lr", ""},
	} {
		if got := Nearest(c.in, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestKey(t *testing.T) {
	known := []string{"lr", "batch-size", "embed-dim", "epochs", "convention"}
	aliases := map[string]string{"learning-rate": "lr", "compat": "convention"}
	for _, c := range []struct{ in, want string }{
		{"learning_rate", "lr"}, {"Learning-Rate", "lr"}, {"batch_size", "batch-size"}, {"BATCH SIZE", "batch-size"},
		{"embed_dims", "embed-dim"}, {"epoch", "epochs"}, {"compat", "convention"}, {"momentum", ""},
	} {
		if got := Key(c.in, known, aliases); got != c.want {
			t.Errorf("Key(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
