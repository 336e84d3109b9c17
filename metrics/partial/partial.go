package partial

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/internal/atomicfile"
	"github.com/dmlbench/dmlbench/metrics"
)

// Format names the file layout; Version is metrics.PartialVersion.
const Format = "dmlbench-partial"

// file is the JSON layout of a partial.
type file struct {
	Format   string            `json:"format"`
	Version  int               `json:"version"`
	Shard    int               `json:"shard"`
	Shards   int               `json:"shards"`
	Rows     [2]int            `json:"rows"` // query rows [lo, hi)
	Inputs   map[string]string `json:"inputs"`
	Settings map[string]string `json:"settings"`
	Command  []string          `json:"command,omitempty"`
	Seconds  float64           `json:"seconds"`
	Lone     int               `json:"lone_queries"`
	Padded   int               `json:"padded,omitempty"`
	Index    []int             `json:"index"`
	Keys     []string          `json:"keys"`
	// Terms[j] is Keys[j]'s column, float64 little-endian (base64 in JSON).
	Terms [][]byte `json:"terms"`
}

// Name is the file name of shard sh.
func Name(sh metrics.Shard) string {
	return fmt.Sprintf("partial-%05d-of-%05d.json", sh.Index, sh.Count)
}

// Write stores p in dir (created if needed) atomically under Name(p.Shard);
// command is the eval command line that computed it (for `eval merge`).
func Write(dir string, p *metrics.Partial, command []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f := file{Format: Format, Version: p.Version, Shard: p.Shard.Index, Shards: p.Shard.Count,
		Rows: [2]int{p.Lo, p.Hi}, Inputs: p.Inputs, Settings: p.Settings, Command: command,
		Seconds: p.Seconds, Lone: p.Lone, Padded: p.Padded, Index: p.Index, Keys: p.Keys}
	if f.Index == nil {
		f.Index = []int{}
	}
	for _, col := range p.Values {
		b := make([]byte, 8*len(col))
		for i, v := range col {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		f.Terms = append(f.Terms, b)
	}
	data, err := json.MarshalIndent(&f, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, Name(p.Shard)), append(data, '\n'))
}

// Read loads the partial at path and the command line that wrote it.
func Read(path string) (*metrics.Partial, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, nil, fmt.Errorf("%s: not a partial result: %v", path, err)
	}
	if f.Format != Format {
		return nil, nil, fmt.Errorf("%s: format %q, want %q", path, f.Format, Format)
	}
	if f.Version != metrics.PartialVersion {
		return nil, nil, fmt.Errorf("%s: partial format version %d; this dmlbench reads version %d (re-run the shard)", path, f.Version, metrics.PartialVersion)
	}
	if len(f.Terms) != len(f.Keys) {
		return nil, nil, fmt.Errorf("%s: %d columns of terms for %d keys", path, len(f.Terms), len(f.Keys))
	}
	p := &metrics.Partial{Version: f.Version, Shard: metrics.Shard{Index: f.Shard, Count: f.Shards},
		Lo: f.Rows[0], Hi: f.Rows[1], Inputs: f.Inputs, Settings: f.Settings, Keys: f.Keys,
		Index: f.Index, Lone: f.Lone, Padded: f.Padded, Seconds: f.Seconds}
	for j, b := range f.Terms {
		if len(b) != 8*len(f.Index) {
			return nil, nil, fmt.Errorf("%s: column %s holds %d bytes for %d queries", path, f.Keys[j], len(b), len(f.Index))
		}
		col := make([]float64, len(f.Index))
		for i := range col {
			col[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		p.Values = append(p.Values, col)
	}
	return p, f.Command, nil
}

// ReadDirs loads every partial file of the directories, in shard order,
// and the command line of the first. A directory without partials is an
// error.
func ReadDirs(dirs ...string) ([]*metrics.Partial, []string, error) {
	var parts []*metrics.Partial
	var command []string
	for _, dir := range dirs {
		paths, err := Files(dir)
		if err != nil {
			return nil, nil, err
		}
		if len(paths) == 0 {
			return nil, nil, fmt.Errorf("%s holds no partial results (partial-*-of-*.json)", dir)
		}
		for _, path := range paths {
			p, cmd, err := Read(path)
			if err != nil {
				return nil, nil, err
			}
			if command == nil {
				command = cmd
			}
			parts = append(parts, p)
		}
	}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].Shard.Index < parts[j].Shard.Index })
	return parts, command, nil
}

// Files lists the partial files of dir, sorted.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("partial directory %s does not exist", dir)
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		var i, n int
		name := e.Name()
		if _, err := fmt.Sscanf(name, "partial-%05d-of-%05d.json", &i, &n); err == nil && strings.HasSuffix(name, ".json") && name == Name(metrics.Shard{Index: i, Count: n}) {
			out = append(out, filepath.Join(dir, name))
		}
	}
	slices.Sort(out)
	return out, nil
}

// Done lists the shards of count whose partial file is in dir, and the
// missing ones.
func Done(dir string, count int) (done, missing []int) {
	for i := range count {
		if _, err := os.Stat(filepath.Join(dir, Name(metrics.Shard{Index: i, Count: count}))); err == nil {
			done = append(done, i)
		} else {
			missing = append(missing, i)
		}
	}
	return done, missing
}
