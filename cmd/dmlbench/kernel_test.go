package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// versionChild runs `dmlbench version` in a child process with
// DMLBENCH_KERNEL=level (the level is read once per process).
func versionChild(t *testing.T, level string) (stdout, stderr string, code int) {
	t.Helper()
	b, _ := json.Marshal([]string{"version"})
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b), "DMLBENCH_KERNEL="+level)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// TestKernelEnv: DMLBENCH_KERNEL forces the kernels `version` names, and a
// bad value is a one-line usage error.
func TestKernelEnv(t *testing.T) {
	out, errOut, code := versionChild(t, "portable")
	if code != 0 || !strings.Contains(out, "distance kernel: portable 6x16") ||
		!strings.Contains(out, "k-means assignment kernel: portable 4x16") || strings.Contains(errOut, "warning") {
		t.Fatalf("portable: exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = versionChild(t, "sse9")
	if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
		!strings.Contains(errOut, `DMLBENCH_KERNEL="sse9": want avx512, avx2 or portable`) {
		t.Fatalf("bad level: exit %d, stderr %q", code, errOut)
	}
}
