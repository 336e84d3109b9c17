// Package usage marks errors in how a command was called: the command
// line exits 2 on them (1 on every other error), so a library that checks
// its options returns one where the caller, not the data, is at fault.
package usage

import (
	"errors"
	"fmt"
)

// Error is an error in how the command was called.
type Error struct{ Err error }

func (e Error) Error() string { return e.Err.Error() }

func (e Error) Unwrap() error { return e.Err }

// Errorf is fmt.Errorf marked as a usage error.
func Errorf(format string, a ...any) error { return Error{fmt.Errorf(format, a...)} }

// Is reports whether err is, or wraps, a usage error.
func Is(err error) bool {
	var e Error
	return errors.As(err, &e)
}
