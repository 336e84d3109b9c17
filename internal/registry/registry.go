// Package registry is the one shape of every named-method table in
// dmlbench (losses, miners, samplers, model architectures, clustering
// algorithms, k-NN backends, data sets): registration panics on a
// duplicate name, listings are sorted by name, an unknown name is an error
// that lists the names there are, and an entry whose code is behind a build
// tag can be declared without it so that asking for it says how to get it.
package registry

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dmlbench/dmlbench/internal/suggest"
)

// Entry is one registered name.
type Entry[T any] struct {
	Name string
	// Value is the registered item (zero when !Available).
	Value T
	// Available is false for an entry declared by Unavailable: known to
	// dmlbench but not compiled into this binary.
	Available bool
	// Summary describes an unavailable entry (available ones describe
	// themselves in Value).
	Summary string
	// HowToGet says how to get an unavailable entry (e.g. "build with
	// -tags faiss; run scripts/install-faiss.sh").
	HowToGet string
}

// Registry maps names to values of type T. It is filled from package init
// functions and read afterwards; it is not safe for concurrent
// registration.
type Registry[T any] struct {
	kind    string
	fold    bool
	entries map[string]*Entry[T]
}

// New returns an empty registry; kind names its items in errors ("loss",
// "k-NN backend").
func New[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, entries: map[string]*Entry[T]{}}
}

// NewFold is New with names compared case-insensitively.
func NewFold[T any](kind string) *Registry[T] {
	r := New[T](kind)
	r.fold = true
	return r
}

func (r *Registry[T]) key(name string) string {
	if r.fold {
		return strings.ToLower(name)
	}
	return name
}

// Register adds name. It panics when name is empty or already registered
// (a programming error), unless the earlier entry was declared Unavailable:
// then the build-tagged code provides it.
func (r *Registry[T]) Register(name string, v T) {
	if name == "" {
		panic(fmt.Sprintf("registry: %s with an empty name", r.kind))
	}
	if e, dup := r.entries[r.key(name)]; dup && e.Available {
		panic(fmt.Sprintf("registry: duplicate registration of %s %q", r.kind, name))
	}
	r.entries[r.key(name)] = &Entry[T]{Name: name, Value: v, Available: true}
}

// Unavailable declares name (described by summary) as known but not in
// this binary; Get(name) then fails with howToGet. A later Register of name provides it (the
// order of init functions across files does not matter).
func (r *Registry[T]) Unavailable(name, summary, howToGet string) {
	if e, ok := r.entries[r.key(name)]; ok {
		if e.Available {
			return
		}
		panic(fmt.Sprintf("registry: %s %q declared unavailable twice", r.kind, name))
	}
	r.entries[r.key(name)] = &Entry[T]{Name: name, Summary: summary, HowToGet: howToGet}
}

// Remove deletes name; tests use it to undo a temporary registration.
func (r *Registry[T]) Remove(name string) { delete(r.entries, r.key(name)) }

// Get returns the value registered as name, or an error: suggest.Unknown's
// for a name that is not registered (the nearest name, or all of them),
// or, for an unavailable entry, that it is not in this binary and how to
// get it.
func (r *Registry[T]) Get(name string) (T, error) {
	var zero T
	e, ok := r.entries[r.key(name)]
	if !ok {
		return zero, suggest.Unknown(r.kind, name, r.Names())
	}
	if !e.Available {
		return zero, fmt.Errorf("%s %q is not in this binary: %s", r.kind, name, e.HowToGet)
	}
	return e.Value, nil
}

// Lookup returns the value registered as name and whether it is available.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	e, ok := r.entries[r.key(name)]
	if !ok || !e.Available {
		var zero T
		return zero, false
	}
	return e.Value, true
}

// Entries returns every entry, unavailable ones included, sorted by name.
func (r *Registry[T]) Entries() []Entry[T] {
	out := make([]Entry[T], 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Values returns the available values sorted by name.
func (r *Registry[T]) Values() []T {
	var out []T
	for _, e := range r.Entries() {
		if e.Available {
			out = append(out, e.Value)
		}
	}
	return out
}

// Names returns every name, unavailable ones included, sorted.
func (r *Registry[T]) Names() []string {
	es := r.Entries()
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

// AvailableNames returns the names compiled into this binary, sorted.
func (r *Registry[T]) AvailableNames() []string {
	var out []string
	for _, e := range r.Entries() {
		if e.Available {
			out = append(out, e.Name)
		}
	}
	return out
}
