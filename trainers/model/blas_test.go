package model

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBadGEMMEnvRefused: a DMLBENCH_GEMM value the CPU/build cannot honour
// makes New fail with a one-line error instead of silently using another
// kernel (checked in a child process, since the variable is read at start).
func TestBadGEMMEnvRefused(t *testing.T) {
	if os.Getenv("DMLBENCH_GEMM_CHILD") == "1" {
		_, err := New(Config{InDim: 8, Hidden: []int{4}, EmbedDim: 2, Chunk: 2})
		if err == nil {
			fmt.Print("accepted")
			os.Exit(3)
		}
		fmt.Print(err)
		os.Exit(0)
	}
	if BLASName == "openblas" {
		t.Skip("the openblas build does not use DMLBENCH_GEMM")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBadGEMMEnvRefused$")
	cmd.Env = append(os.Environ(), "DMLBENCH_GEMM_CHILD=1", "DMLBENCH_GEMM=avx1024")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "DMLBENCH_GEMM=avx1024") || strings.Count(string(out), "\n") > 0 {
		t.Fatalf("child: %v, output %q", err, out)
	}
}
