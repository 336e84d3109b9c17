package suite

import (
	"fmt"

	"github.com/dmlbench/dmlbench/internal/procout"
)

// lastLine remembers the last non-empty line a child writes, so that a
// failed child is reported by its own last error message instead of a
// bare "exit status 1".
type lastLine = procout.LastLine

// withLastLine adds the child's last stderr line to its exit error.
func withLastLine(err error, l *lastLine) error {
	if s := l.String(); s != "" {
		return fmt.Errorf("%w (%s)", err, s)
	}
	return err
}
