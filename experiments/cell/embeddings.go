package cell

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dmlbench/dmlbench/fixtures/arrays"
	"github.com/dmlbench/dmlbench/internal/mat32"
)

// EmbeddingFile is the name of split's embeddings after epoch (1-based),
// without its extension (.npy or .pt).
func EmbeddingFile(split string, epoch int) string { return fmt.Sprintf("%s_e%03d", split, epoch) }

// ReadEmbeddings reads split's embeddings after epoch from dir and checks
// them: present, a 2-D float array (float16/32/64, .npy or .pt alike) of
// rows rows, finite.
func ReadEmbeddings(dir, split string, epoch, rows int) (mat32.Matrix, error) {
	base := filepath.Join(dir, EmbeddingFile(split, epoch))
	path := ""
	for _, ext := range []string{".npy", ".pt"} {
		if fileExists(base + ext) {
			path = base + ext
			break
		}
	}
	if path == "" {
		return mat32.Matrix{}, fmt.Errorf("epoch %d: the trainer wrote no embeddings of %s (want %s.npy or .pt)", epoch, split, base)
	}
	name := filepath.Base(path)
	if strings.HasSuffix(path, ".npy") {
		if err := checkNPYHeader(path); err != nil {
			return mat32.Matrix{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	m, err := arrays.LoadFloatEmbeddings(path)
	if err != nil {
		return mat32.Matrix{}, err
	}
	if m.Rows != rows {
		return mat32.Matrix{}, fmt.Errorf("%s: %d rows, but %d rows of %s were asked (one embedding per row of the rows file, in its order)", name, m.Rows, rows, split)
	}
	if m.Cols < 1 {
		return mat32.Matrix{}, fmt.Errorf("%s: no columns", name)
	}
	if err := arrays.CheckFinite(m, name); err != nil {
		return mat32.Matrix{}, err
	}
	return m, nil
}

var (
	descrRe = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	shapeRe = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// checkNPYHeader refuses what is not a 2-D float array: embeddings of
// another dtype or shape are a trainer's mistake (labels or indices saved
// in place of embeddings, a missing reshape), not something to convert.
func checkNPYHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var pre [10]byte
	if _, err := io.ReadFull(f, pre[:]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return fmt.Errorf("not an .npy file")
	}
	n := int(binary.LittleEndian.Uint16(pre[8:10]))
	if pre[6] >= 2 {
		var more [2]byte
		if _, err := io.ReadFull(f, more[:]); err != nil {
			return fmt.Errorf("truncated header")
		}
		n = int(binary.LittleEndian.Uint32(append(pre[8:10:10], more[:]...)))
	}
	if n > 1<<16 {
		return fmt.Errorf("header of %d bytes", n)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(f, h); err != nil {
		return fmt.Errorf("truncated header")
	}
	d := descrRe.FindSubmatch(h)
	s := shapeRe.FindSubmatch(h)
	if d == nil || s == nil {
		return fmt.Errorf("unreadable header %q", strings.TrimSpace(string(h)))
	}
	dt := strings.TrimLeft(string(d[1]), "<>=|")
	if dt != "f2" && dt != "f4" && dt != "f8" {
		return fmt.Errorf("dtype %s; embeddings must be float16, float32 or float64", string(d[1]))
	}
	var dims []int
	for _, p := range strings.Split(string(s[1]), ",") {
		if p = strings.TrimSpace(p); p != "" {
			v, err := strconv.Atoi(p)
			if err != nil {
				return fmt.Errorf("shape (%s)", s[1])
			}
			dims = append(dims, v)
		}
	}
	if len(dims) != 2 {
		return fmt.Errorf("shape (%s); embeddings must be 2-D (rows × dimensions)", strings.TrimSpace(string(s[1])))
	}
	return nil
}
