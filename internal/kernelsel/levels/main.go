// Command levels prints the kernel levels this CPU and build support, one
// per line, best first (the values DMLBENCH_KERNEL accepts here). With
// -others it leaves out the best, which an unset DMLBENCH_KERNEL runs:
// make test runs the kernel-sensitive packages once more per line.
package main

import (
	"flag"
	"fmt"

	"github.com/dmlbench/dmlbench/internal/kernelsel"
)

func main() {
	others := flag.Bool("others", false, "leave out the best level")
	flag.Parse()
	for l := kernelsel.AVX512; l >= kernelsel.Portable; l-- {
		if !kernelsel.Supported(l) || (*others && l == kernelsel.Best()) {
			continue
		}
		fmt.Println(l)
	}
}
