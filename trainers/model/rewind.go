package model

import (
	"reflect"
	"unsafe"

	G "gorgonia.org/gorgonia"
)

// keepRegisters makes run rewind instead of Reset (a switch for tests).
var keepRegisters = true

// rewind restarts a compiled Gorgonia tape machine at its first
// instruction while keeping its register values. Gorgonia's Reset also
// drops every register (tapeMachine.cpumem), so each run would allocate all
// intermediate tensors again (about 190 MB per CNN training step, most of
// the step's time going to page faults, zeroing and GC); with the
// registers kept, each op writes into last run's tensor of the same shape
// (UsePreallocDo). Gorgonia v0.9.18 exposes no way to rewind only the
// program counter, so rewind sets the unexported field tapeMachine.pc
// (located by name with reflect, checked to be an int). ok is false when
// vm is not such a machine (another Gorgonia version, another VM); the
// caller then falls back to Reset.
func rewind(vm G.VM) (ok bool) {
	v := reflect.ValueOf(vm)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("pc")
	if !f.IsValid() || f.Kind() != reflect.Int || v.Elem().Type().String() != "gorgonia.tapeMachine" {
		return false
	}
	*(*int)(unsafe.Pointer(f.UnsafeAddr())) = 0
	return true
}
