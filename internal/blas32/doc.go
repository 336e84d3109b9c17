// Package blas32 is the project's BLAS for training: a cache-blocked Sgemm
// (Goto & van de Geijn 2008: pack a kc×nc panel of op(B) and an mc×kc
// block of op(A) into micro-panels, then run a register-blocked mr×nr
// micro-kernel over them) with assembly micro-kernels for AVX-512 (12×32)
// and AVX2+FMA (6×16), chosen at run time with golang.org/x/sys/cpu, and
// the same Dgemm in float64 (12×16 and 6×8 kernels) for the losses'
// float64 graphs. On a
// CPU without AVX2 the automatic choice is gonum's Sgemm, which beats the
// portable Go 4×4 kernel (kept to be forced and tested). Every other BLAS
// routine is gonum's (Implementation embeds gonum's blas/gonum
// Implementation).
//
// Gorgonia's training path only calls Sgemm (trainers/model: the MLP and
// the CNN's output layer, forward and backward) and Dgemm
// (trainers/losses), in the NoTrans/NoTrans, NoTrans/Trans and
// Trans/NoTrans forms (logged from training steps); that is what this
// package speeds up. SgemmPanels is the same product with operands that
// pack themselves (Panels): the CNN's convolutions hand it the im2col
// matrix of a map without storing it, and get the bits Sgemm would give
// for the stored matrix.
//
// Numbers. For each element of C the products over k are accumulated in
// ascending k inside a block of kc = 256 (one FMA chain per element), the
// block sums are added to C in ascending block order as C += α·acc (a
// rounded multiply, then a rounded add), and β is applied to C once, first.
// The order depends only on the kernel (its FMA use) and kc, not on the
// tile position of the element, the split of C over goroutines or the
// thread count: results are bit-for-bit reproducible for a given kernel on
// any number of threads. The avx512 and avx2 kernels run the same FMA
// chain per element, so they give the same bits too (a run repeats across
// AVX2 and AVX-512 machines); portable (no FMA) and gonum agree with them
// to rounding (about 1e-6 relative), not bit for bit.
//
// The automatic choice is the fastest kernel at the instruction-set level
// of the k-NN and k-means kernels (internal/kernelsel: the CPU's best, or
// DMLBENCH_KERNEL), gonum's when that level is portable. DMLBENCH_GEMM
// (avx512, avx2, gonum or portable; empty or "auto": the automatic choice)
// forces the GEMM alone; an unknown or unsupported name is reported by
// EnvError.
package blas32
