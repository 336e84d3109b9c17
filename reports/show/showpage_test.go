package show

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dmlbench/dmlbench/fixtures"
	"github.com/dmlbench/dmlbench/internal/mat32"
	"github.com/dmlbench/dmlbench/metrics"
)

// omniglotPage is the page of the Omniglot test split's raw 14×14 pixels
// (rows L2-normalised, cosine), 30 classes, pictures inlined.
func omniglotPage(t *testing.T, worst, random, k int) (*Page, []byte) {
	t.Helper()
	ds, in := omniglotInput(t)
	imgs, err := PixelImages(ds.X, []int{1, 14, 14}, true)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(context.Background(), in,
		Options{Worst: worst, Random: random, K: k, Seed: 1, Distance: "cosine", Title: "Omniglot test, 30 classes: raw pixels"}, imgs, imgs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return p, b.Bytes()
}

// omniglotInput is the Omniglot test split's first 30 classes at 14×14
// and its input (rows L2-normalised).
func omniglotInput(t *testing.T) (fixtures.Split, metrics.Input) {
	t.Helper()
	ds, err := fixtures.LoadOmniglot(fixtures.OmniglotOptions{Size: 14})
	if err != nil {
		t.Fatal(err)
	}
	keep := make([]int, 30)
	for i := range keep {
		keep[i] = i
	}
	s := fixtures.SubsetClasses(ds.Test, keep)
	emb := fixtures.NormalizeRows(mat32.Matrix{Rows: s.X.Rows, Cols: s.X.Cols, Data: append([]float32(nil), s.X.Data...)})
	return s, metrics.Input{Emb: emb, Labels: s.Labels, ClassNames: s.ClassNames}
}

// The worst queries come first by AP@R, every hit is marked by its class,
// and the page holds one picture per query and per hit.
func TestBuildOmniglot(t *testing.T) {
	t.Parallel()
	p, html := omniglotPage(t, 5, 3, 4)
	if len(p.Worst) != 5 || len(p.Random) != 3 {
		t.Fatalf("%d worst, %d random", len(p.Worst), len(p.Random))
	}
	for i := 1; i < len(p.Worst); i++ {
		if p.Worst[i].APR < p.Worst[i-1].APR {
			t.Errorf("worst not ascending in AP@R: %v then %v", p.Worst[i-1].APR, p.Worst[i].APR)
		}
	}
	for _, q := range append(p.Worst, p.Random...) {
		if len(q.Hits) != 4 {
			t.Errorf("query %d: %d hits", q.Row, len(q.Hits))
		}
		for _, h := range q.Hits {
			if h.Correct != (h.Label == q.Label) || h.Row == q.Row {
				t.Errorf("query %d (%s): hit %d (%s) marked %v", q.Row, q.Label, h.Row, h.Label, h.Correct)
			}
		}
	}
	if n := bytes.Count(html, []byte("<img ")); n != 8*5 {
		t.Errorf("%d images, want 40", n)
	}
	if bytes.Contains(html, []byte("ZgotmplZ")) {
		t.Error("a data URI was rejected by html/template")
	}
}

var imgSrc = regexp.MustCompile(`<img src="data:image/png;base64,([^"]+)"`)

// Headless Chromium loads the page with no console error, and its DOM
// holds the expected number of images, each a valid PNG; the screenshot
// is written to $DMLBENCH_SHOW_SCREENSHOT when set.
func TestChromiumRendersPage(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (scripts/setup.sh installs it)")
	}
	_, html := omniglotPage(t, 4, 4, 6)
	dir := t.TempDir()
	page := filepath.Join(dir, "show.html")
	if err := os.WriteFile(page, html, 0o644); err != nil {
		t.Fatal(err)
	}
	shot := os.Getenv("DMLBENCH_SHOW_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(dir, "show.png")
	}
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--enable-logging=stderr", "--v=0"}
	run := func(extra ...string) (string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(append(flags, extra...), "file://"+page)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", extra, err, lastLines(errb.String(), 10))
		}
		return out.String(), errb.String()
	}
	dom, logs := run("--dump-dom")
	_, logs2 := run("--screenshot="+shot, "--window-size=1100,1500", "--hide-scrollbars")
	for _, l := range strings.Split(logs+logs2, "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			t.Errorf("console message: %s", l)
		}
	}
	m := imgSrc.FindAllStringSubmatch(dom, -1)
	if want := 8 * 7; len(m) != want || strings.Count(dom, "<img ") != want {
		t.Fatalf("rendered DOM has %d inline PNGs (%d img), want %d", len(m), strings.Count(dom, "<img "), want)
	}
	for _, s := range m {
		b, err := base64.StdEncoding.DecodeString(s[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := image.Decode(bytes.NewReader(b)); err != nil {
			t.Fatalf("an image does not decode: %v", err)
		}
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// An image list (dir:PATH/test_images.txt, --images) is read relative to
// its folder and inlined; a file that is no image is refused.
func TestFileImages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"a.png": b.Bytes(), "sub/b.png": b.Bytes(), "c.txt": []byte("not an image")} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := filepath.Join(dir, "test_images.txt")
	if err := os.WriteFile(list, []byte("a.png\n\nsub/b.png\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := ReadImageList(list)
	if err != nil || len(paths) != 2 || paths[1] != filepath.Join(dir, "sub/b.png") {
		t.Fatalf("%v %v", paths, err)
	}
	imgs, err := FileImages(paths)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := imgs(1); err != nil || !strings.HasPrefix(string(u), "data:image/png;base64,") {
		t.Errorf("row 1: %.40s %v", u, err)
	}
	text, err := FileImages([]string{filepath.Join(dir, "c.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := text(0); err == nil || !strings.Contains(err.Error(), "not an image") {
		t.Errorf("a text file accepted as an image: %v", err)
	}
	if _, err := FileImages([]string{filepath.Join(dir, "missing.png")}); err == nil {
		t.Error("a missing image accepted")
	}
}

// TestFileImagesReadOnlyShown: a page of a long image list reads the
// files of the rows it shows and no other: the rows it does not show are
// given files that are not images, which a read would refuse.
func TestFileImagesReadOnlyShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	const n = 60
	x := mat32.Matrix{Rows: n, Cols: 2, Data: make([]float32, 2*n)}
	labels := make([]int32, n)
	for i := range n {
		labels[i] = int32(i % 6)
		x.Data[2*i], x.Data[2*i+1] = float32(i%6), float32(i)/100
	}
	in := metrics.Input{Emb: x, Labels: labels}
	opt := Options{K: 2, Worst: 2, Random: 1, Seed: 1}
	shown := map[int]bool{}
	note := func(row int) (template.URL, error) { shown[row] = true; return "", nil }
	if _, err := Build(context.Background(), in, opt, note, note); err != nil {
		t.Fatal(err)
	}
	paths := make([]string, n)
	for i := range n {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%d.png", i))
		data := []byte("not an image")
		if shown[i] {
			data = b.Bytes()
		}
		if err := os.WriteFile(paths[i], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	imgs, err := FileImages(paths)
	if err != nil {
		t.Fatalf("%v (%d of %d rows shown)", err, len(shown), n)
	}
	p, err := Build(context.Background(), in, opt, imgs, imgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Worst) == 0 || !strings.HasPrefix(string(p.Worst[0].Img), "data:image/png") {
		t.Errorf("shown query without its picture")
	}
}
