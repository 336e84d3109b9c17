// Package procout handles what a child process prints: LastLine keeps its
// last non-empty line (to quote in an error), in time linear in the bytes
// written; Bounded passes a head of it through and keeps only a tail of
// the rest, so a chatty child cannot fill a disk with its log. Checked
// keeps the first write error of the process's own standard output.
package procout
