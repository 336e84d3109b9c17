package gpu

import _ "embed"

// The PTX is generated from kernels.cu by clang (Debian's clang package; no
// CUDA toolkit): the NVIDIA driver JIT-compiles the sm_80 PTX for the GPU it
// runs on (Ampere, Hopper and later).
//
//go:generate clang -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 -O3 -ffp-contract=off -S -o kernels.ptx kernels.cu

//go:embed kernels.ptx
var kernelsPTX []byte
