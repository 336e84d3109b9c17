package registry

import (
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[int]("widget")
	r.Register("b", 2)
	r.Register("a", 1)
	r.Unavailable("gpu", "the GPU widget", "build with -tags gpu")
	if got := strings.Join(r.Names(), ","); got != "a,b,gpu" {
		t.Errorf("Names = %s", got)
	}
	if v, err := r.Get("b"); err != nil || v != 2 {
		t.Errorf("Get(b) = %v, %v", v, err)
	}
	if _, err := r.Get("zz"); err == nil || err.Error() != `unknown widget "zz"; have: a, b, gpu` {
		t.Errorf("Get(zz) error %v", err)
	}
	if _, err := r.Get("gpu"); err == nil || err.Error() != `widget "gpu" is not in this binary: build with -tags gpu` {
		t.Errorf("Get(gpu) error %v", err)
	}
	if _, ok := r.Lookup("gpu"); ok {
		t.Error("an unavailable entry looks up as available")
	}
	if vs := r.Values(); len(vs) != 2 || vs[0] != 1 || vs[1] != 2 {
		t.Errorf("Values = %v", vs)
	}
	// The build-tagged file provides the declared entry.
	r.Register("gpu", 3)
	if v, err := r.Get("gpu"); err != nil || v != 3 {
		t.Errorf("Get(gpu) after Register = %v, %v", v, err)
	}
	r.Unavailable("gpu", "", "ignored: already provided")
	if _, err := r.Get("gpu"); err != nil {
		t.Error(err)
	}
}

func TestRegistryPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"duplicate": func() { r := New[int]("x"); r.Register("a", 1); r.Register("a", 2) },
		"empty":     func() { New[int]("x").Register("", 1) },
		"twice":     func() { r := New[int]("x"); r.Unavailable("a", "", ""); r.Unavailable("a", "", "") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestFold(t *testing.T) {
	r := NewFold[int]("sampler")
	r.Register("SPC-2", 2)
	if v, err := r.Get("spc-2"); err != nil || v != 2 {
		t.Errorf("Get = %v, %v", v, err)
	}
	if r.Names()[0] != "SPC-2" {
		t.Errorf("name as registered: %v", r.Names())
	}
}
