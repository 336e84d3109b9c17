package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// NewFileMode is the permission of files that WriteFile creates (an
// existing file keeps its own).
const NewFileMode fs.FileMode = 0o644

// TempPrefix starts the name of every temporary file this package creates
// (".tmp-NAME-RANDOM" in NAME's directory).
const TempPrefix = ".tmp-"

// File is a file being written atomically: writes go to a temporary file
// that Commit renames over the target and Abort removes. The target is not
// touched until Commit.
type File struct {
	*os.File
	path, target string
	mode         fs.FileMode
	done         bool
}

// Create starts an atomic write of path. The rules, the same for every file
// of dmlbench (run.json, checkpoints, eval --out, .npy exports, reports,
// figures, batch scripts, profiles):
//
//   - path may be a symbolic link: the file it points to is replaced and the
//     link itself stays (a dangling link creates its target);
//   - an existing target must be a regular file: a directory, device, pipe
//     or socket is refused with an error, never replaced;
//   - an existing file keeps its permission bits; a new file gets 0644
//     (CreateMode chooses another);
//   - missing parent directories are created (0755).
//
// Errors are one line naming path.
func Create(path string) (*File, error) { return create(path, 0) }

// CreateMode is Create with the permission bits a new file gets.
func CreateMode(path string, mode fs.FileMode) (*File, error) { return create(path, mode) }

func create(path string, newMode fs.FileMode) (*File, error) {
	target, mode, existed, err := writeTarget(path)
	if err != nil {
		return nil, err
	}
	if !existed && newMode != 0 {
		mode = newMode
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, TempPrefix+filepath.Base(target)+"-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return &File{File: f, path: path, target: target, mode: mode}, nil
}

// Commit syncs the temporary file, renames it over the target and syncs the
// directory. After a failed Commit the target is unchanged and the
// temporary file is removed.
func (f *File) Commit() (err error) {
	if f.done {
		return fmt.Errorf("write %s: already committed or aborted", f.path)
	}
	f.done = true
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.File.Close()
			os.Remove(tmp)
		}
	}()
	for _, step := range []func() error{func() error { return f.Chmod(f.mode) }, f.Sync, f.File.Close} {
		if err = step(); err != nil {
			return fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
		}
	}
	if err = os.Rename(tmp, f.target); err != nil {
		return fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
	}
	if err := syncDir(filepath.Dir(f.target)); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", f.path, unwrapPath(err))
	}
	return nil
}

// Abort removes the temporary file (no-op after Commit).
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.Name())
}

// WriteFile writes a file atomically (Create, then Commit when write has
// filled it, Abort when write fails), buffered.
func WriteFile(path string, write func(w io.Writer) error) error {
	return writeFile(path, 0, write)
}

// WriteFileMode is WriteFile with the permission bits a new file gets.
func WriteFileMode(path string, mode fs.FileMode, write func(w io.Writer) error) error {
	return writeFile(path, mode, write)
}

func writeFile(path string, mode fs.FileMode, write func(w io.Writer) error) error {
	f, err := create(path, mode)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return f.Commit()
}

// WriteBytes writes b to path with WriteFile.
func WriteBytes(path string, b []byte) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// CleanTemps removes the temporary files that writers killed before their
// Commit left in dir: every ".tmp-NAME-*" for the given names (all names
// when none are given) whose modification time is at least minAge old
// (0: any age). It returns the paths it removed. Call it where no live
// writer can be using dir (under the directory's lock), or with a minAge
// far longer than any write takes.
func CleanTemps(dir string, minAge time.Duration, names ...string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	now := time.Now()
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, TempPrefix) || !e.Type().IsRegular() {
			continue
		}
		if len(names) > 0 && !matchesAny(n, names) {
			continue
		}
		if minAge > 0 {
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) < minAge {
				continue
			}
		}
		p := filepath.Join(dir, n)
		if err := os.Remove(p); err == nil {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

func matchesAny(tempName string, names []string) bool {
	for _, name := range names {
		if strings.HasPrefix(tempName, TempPrefix+name+"-") {
			return true
		}
	}
	return false
}

// writeTarget resolves symbolic links in path and returns the file to
// replace, the permission bits the new content gets, and whether it exists.
func writeTarget(path string) (string, fs.FileMode, bool, error) {
	target := path
	for hops := 0; ; hops++ {
		st, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return target, NewFileMode, false, nil
		}
		if err != nil {
			return "", 0, false, fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
		switch m := st.Mode(); {
		case m.IsRegular():
			return target, m.Perm(), true, nil
		case m&fs.ModeSymlink != 0:
			if hops == 40 {
				return "", 0, false, fmt.Errorf("write %s: too many levels of symbolic links", path)
			}
			link, err := os.Readlink(target)
			if err != nil {
				return "", 0, false, fmt.Errorf("write %s: %w", path, unwrapPath(err))
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(target), link)
			}
			target = link
		case m.IsDir():
			return "", 0, false, fmt.Errorf("write %s: is a directory; give a file name", path)
		default:
			return "", 0, false, fmt.Errorf("write %s: not a regular file (%s); refusing to replace it", path, kindOf(m))
		}
	}
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// unwrapPath drops the operation and temporary-file name of an
// *fs.PathError or *os.LinkError so the message names only the user's path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
