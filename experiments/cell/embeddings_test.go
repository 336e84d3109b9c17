package cell

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npyBytes lays out a version 1.0 .npy file.
func npyBytes(descr, shape string, data []byte) []byte {
	h := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
	for (10+len(h)+1)%64 != 0 {
		h += " "
	}
	b := binary.LittleEndian.AppendUint16([]byte("\x93NUMPY\x01\x00"), uint16(len(h)+1))
	return append(append(b, h+"\n"...), data...)
}

// int64PT is torch.save of a 3×2 int64 tensor holding 0 … 5 (zip layout;
// the pickle is _rebuild_tensor_v2 of storage "0").
func int64PT(t *testing.T) []byte {
	pkl := "\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\a\x00\x00\x00storagectorch\nLongStorage\nX\x01\x00\x00\x000" +
		"X\x03\x00\x00\x00cpuJ\x06\x00\x00\x00tQJ\x00\x00\x00\x00(J\x03\x00\x00\x00J\x02\x00\x00\x00t(J\x02\x00\x00\x00" +
		"J\x01\x00\x00\x00t\x89ccollections\nOrderedDict\n)RtR."
	var data []byte
	for v := range int64(6) {
		data = binary.LittleEndian.AppendUint64(data, uint64(v))
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range []struct{ name, body string }{{"archive/data.pkl", pkl}, {"archive/data/0", string(data)}, {"archive/version", "3\n"}} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A trainer's embeddings follow one rule whatever the format
// (docs/external.md): float16/32/64 in a .npy as in a .pt; integers
// refused in a .pt as in a .npy.
func TestReadEmbeddingsOneRule(t *testing.T) {
	dir := t.TempDir()
	put := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// 0.5, -1, 2, 1.5, 0.25, -3 in float16
	half := []uint16{0x3800, 0xbc00, 0x4000, 0x3e00, 0x3400, 0xc200}
	var h []byte
	for _, v := range half {
		h = binary.LittleEndian.AppendUint16(h, v)
	}
	put("val_e001.npy", npyBytes("<f2", "(3, 2)", h))
	m, err := ReadEmbeddings(dir, "val", 1, 3)
	if err != nil || !slices.Equal(m.Data, []float32{0.5, -1, 2, 1.5, 0.25, -3}) {
		t.Errorf("float16 .npy: %v %v", m.Data, err)
	}
	put("val_e002.pt", int64PT(t))
	if _, err := ReadEmbeddings(dir, "val", 2, 3); err == nil || !strings.Contains(err.Error(), "val_e002.pt: dtype torch.int64; embeddings must be float16, float32 or float64") {
		t.Errorf("int64 .pt: %v", err)
	}
	put("val_e003.npy", npyBytes("<i8", "(3, 2)", make([]byte, 48)))
	if _, err := ReadEmbeddings(dir, "val", 3, 3); err == nil || !strings.Contains(err.Error(), "val_e003.npy: dtype <i8; embeddings must be float16, float32 or float64") {
		t.Errorf("int64 .npy: %v", err)
	}
}
