// Package commentlint holds a test that reads every comment of the
// repository's Go files and rejects text that belongs in commit messages
// or docs/, not in code: development history, references to the project's
// own issue tracker, and papers cited by an internal number instead of
// authors and year (docs/references.md). The phrases are listed in the
// test. A second test holds every function, declared or literal, to at
// most 120 lines.
package commentlint
