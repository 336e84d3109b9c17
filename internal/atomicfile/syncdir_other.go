//go:build !unix

package atomicfile

// syncDir: directories cannot be opened for syncing here; the rename is
// left to the file system's own ordering.
func syncDir(string) error { return nil }
