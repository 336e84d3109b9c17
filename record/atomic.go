package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// NewFileMode is the permission of files that WriteFile creates (an
// existing file keeps its own).
const NewFileMode fs.FileMode = 0o644

// WriteFile writes a file atomically: write fills a temporary file in the
// target's directory, which is synced and renamed over the target only when
// complete, so a reader sees the old content or the new, never a mix. Every
// result file of dmlbench (run.json, eval --out, .npy exports, reports,
// figures, checkpoints) goes through it, with one set of rules:
//
//   - path may be a symbolic link: the file it points to is replaced and the
//     link itself stays (a dangling link creates its target);
//   - an existing target must be a regular file: a directory, device, pipe
//     or socket is refused with an error, never replaced;
//   - an existing file keeps its permission bits; a new file gets 0644;
//   - missing parent directories are created (0755).
//
// Errors are one line naming path.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
	target, mode, err := writeTarget(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(target)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	for _, step := range []func() error{bw.Flush, func() error { return f.Chmod(mode) }, f.Sync, f.Close} {
		if err = step(); err != nil {
			return fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
	}
	if err = os.Rename(tmp, target); err != nil {
		return fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	return nil
}

// WriteBytes writes b to path with WriteFile.
func WriteBytes(path string, b []byte) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// writeTarget resolves symbolic links in path and returns the file to
// replace and the permission bits the new content gets.
func writeTarget(path string) (string, fs.FileMode, error) {
	target := path
	for hops := 0; ; hops++ {
		st, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return target, NewFileMode, nil
		}
		if err != nil {
			return "", 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
		switch m := st.Mode(); {
		case m.IsRegular():
			return target, m.Perm(), nil
		case m&fs.ModeSymlink != 0:
			if hops == 40 {
				return "", 0, fmt.Errorf("write %s: too many levels of symbolic links", path)
			}
			link, err := os.Readlink(target)
			if err != nil {
				return "", 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(target), link)
			}
			target = link
		case m.IsDir():
			return "", 0, fmt.Errorf("write %s: is a directory; give a file name", path)
		default:
			return "", 0, fmt.Errorf("write %s: not a regular file (%s); refusing to replace it", path, kindOf(m))
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
