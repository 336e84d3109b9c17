package tune

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TrainViewDir is the directory, inside a tuning cell's directory, that the
// command sees as its data set: the data set's files less the test split's.
const TrainViewDir = "data"

// trainView builds (once) cellDir/data: every regular file under dataDir,
// hard-linked (copied across file systems), except the test split's: the
// top-level files named test_* and the files test_items.txt lists that
// train_items.txt does not. No entry is a symlink into dataDir, so a
// tuning command that stays inside the view cannot read a test file.
// Symbolic links inside dataDir are not followed (nor reproduced).
func trainView(dataDir, cellDir string) (string, error) {
	view := filepath.Join(cellDir, TrainViewDir)
	if st, err := os.Stat(view); err == nil && st.IsDir() {
		return view, nil
	}
	hidden, err := testOnlyItems(dataDir)
	if err != nil {
		return "", err
	}
	tmp := view + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dataDir, p)
		if err != nil {
			return err
		}
		if rel != "." && !strings.Contains(rel, string(filepath.Separator)) && strings.HasPrefix(d.Name(), "test_") || hidden[rel] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			return linkOrCopy(p, dst)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return view, os.Rename(tmp, view)
}

// testOnlyItems are the paths (relative to dataDir) test_items.txt lists
// and train_items.txt does not.
func testOnlyItems(dataDir string) (map[string]bool, error) {
	test, err := itemPaths(dataDir, "test_items.txt")
	if err != nil {
		return nil, err
	}
	train, err := itemPaths(dataDir, "train_items.txt")
	if err != nil {
		return nil, err
	}
	for p := range train {
		delete(test, p)
	}
	return test, nil
}

func itemPaths(dataDir, name string) (map[string]bool, error) {
	out := map[string]bool{}
	f, err := os.Open(filepath.Join(dataDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || filepath.IsAbs(line) {
			continue
		}
		out[filepath.Clean(line)] = true
	}
	return out, sc.Err()
}

func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
