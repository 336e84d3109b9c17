//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// syncDir flushes a directory's entries (the rename) to disk. File systems
// that cannot sync a directory (EINVAL) are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
