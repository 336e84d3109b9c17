package main

// Byte offsets of knn's kernEpi (knn/kernel.go; TestKernEpiLayout checks
// them against the Go struct). The c block holds mr rows of up to nrMax
// values; a kernel with nr columns uses row stride nr.
const (
	knnMR    = 6
	knnNRMax = 32
	epC      = 0
	epNQ     = knnMR * knnNRMax * 4 // 768
	epThr    = epNQ + 32
	epScale  = epThr + 32
	epLo     = epScale + 32
	epNX     = epLo + 32
	epCthr   = epNX + 8
	epRmask  = epCthr + 8
	epCmask  = epRmask + 32
)

func genKNN(a *asm) {
	a.header(`Distance micro-kernels of knn.Exact (contract: kernEpi and the comment
above it in kernel.go). Both compute a 6×nr block

  acc[r][j] = sum_p a[p*6+r] * b[p*nr+j]            (one FMA per step, p ascending)
  D[r][j]   = max(lo, (nq[r] + nx[j]) + scale*acc)   (fused; NaN propagates)
  rmask[r]  = bits j with D[r][j] <= thr[r]
  cmask     = bits j with some r: D[r][j] <= cthr[j]

kern6x16AVX2:   AVX2+FMA, 12 YMM accumulators (6 rows × 2 vectors of 8).
kern6x32AVX512: AVX-512F, 12 ZMM accumulators (6 rows × 2 vectors of 16).`)
	genKNNAVX2(a)
	genKNNAVX512(a)
}

func genKNNAVX2(a *asm) {
	const nr = 16
	a.blank()
	a.p("// func kern6x16AVX2(a, b *float32, kc int, ep *kernEpi)")
	a.p("TEXT ·kern6x16AVX2(SB), NOSPLIT, $0-32")
	a.p("MOVQ a+0(FP), AX")
	a.p("MOVQ b+8(FP), BX")
	a.p("MOVQ kc+16(FP), CX")
	a.p("MOVQ ep+24(FP), R8")
	for i := 0; i < 2*knnMR; i++ {
		a.p("VXORPS Y%d, Y%d, Y%d", i, i, i)
	}
	a.p("TESTQ CX, CX")
	a.p("JLE avx2epi")
	a.p("avx2loop:")
	a.p("VMOVUPS (BX), Y12")
	a.p("VMOVUPS 32(BX), Y13")
	for r := 0; r < knnMR; r++ {
		t := 14 + r%2
		a.p("VBROADCASTSS %d(AX), Y%d", 4*r, t)
		a.p("VFMADD231PS Y12, Y%d, Y%d", t, 2*r)
		a.p("VFMADD231PS Y13, Y%d, Y%d", t, 2*r+1)
	}
	a.p("ADDQ $%d, AX", 4*knnMR)
	a.p("ADDQ $%d, BX", 4*nr)
	a.p("DECQ CX")
	a.p("JNZ avx2loop")
	a.p("avx2epi:")
	a.p("MOVQ %d(R8), R9", epNX)
	a.p("MOVQ %d(R8), R10", epCthr)
	a.p("VMOVUPS (R9), Y12")
	a.p("VMOVUPS 32(R9), Y13")
	a.p("XORL R11, R11")
	a.p("XORL R12, R12")
	for r := 0; r < knnMR; r++ {
		x0, x1 := 2*r, 2*r+1 // accumulators, free after use
		a.p("// row %d", r)
		a.p("VBROADCASTSS %d(R8), Y14", epNQ+4*r)
		a.p("VADDPS Y12, Y14, Y15")
		a.p("VADDPS Y13, Y14, Y14")
		a.p("VFMADD231PS %d(R8), Y%d, Y15", epScale, x0)
		a.p("VFMADD231PS %d(R8), Y%d, Y14", epScale, x1)
		a.p("VMOVUPS %d(R8), Y%d", epLo, x0)
		a.p("VMAXPS Y15, Y%d, Y15", x0)
		a.p("VMAXPS Y14, Y%d, Y14", x0)
		a.p("VMOVUPS Y15, %d(R8)", epC+4*nr*r)
		a.p("VMOVUPS Y14, %d(R8)", epC+4*nr*r+32)
		a.p("VBROADCASTSS %d(R8), Y%d", epThr+4*r, x0)
		a.p("VCMPPS $2, Y%d, Y15, Y%d", x0, x1)
		a.p("VMOVMSKPS Y%d, AX", x1)
		a.p("VCMPPS $2, Y%d, Y14, Y%d", x0, x1)
		a.p("VMOVMSKPS Y%d, BX", x1)
		a.p("SHLL $8, BX")
		a.p("ORL BX, AX")
		a.p("MOVL AX, %d(R8)", epRmask+4*r)
		a.p("VCMPPS $2, (R10), Y15, Y%d", x1)
		a.p("VMOVMSKPS Y%d, AX", x1)
		a.p("ORL AX, R11")
		a.p("VCMPPS $2, 32(R10), Y14, Y%d", x1)
		a.p("VMOVMSKPS Y%d, AX", x1)
		a.p("ORL AX, R12")
	}
	a.p("SHLL $8, R12")
	a.p("ORL R12, R11")
	a.p("MOVL R11, %d(R8)", epCmask)
	a.p("VZEROUPPER")
	a.p("RET")
}

func genKNNAVX512(a *asm) {
	const nr = 32
	a.blank()
	a.p("// func kern6x32AVX512(a, b *float32, kc int, ep *kernEpi)")
	a.p("TEXT ·kern6x32AVX512(SB), NOSPLIT, $0-32")
	a.p("MOVQ a+0(FP), AX")
	a.p("MOVQ b+8(FP), BX")
	a.p("MOVQ kc+16(FP), CX")
	a.p("MOVQ ep+24(FP), R8")
	for i := 0; i < 2*knnMR; i++ {
		a.p("VXORPS Z%d, Z%d, Z%d", i, i, i)
	}
	a.p("TESTQ CX, CX")
	a.p("JLE avx512epi")
	a.p("avx512loop:")
	a.p("VMOVUPS (BX), Z24")
	a.p("VMOVUPS 64(BX), Z25")
	for r := 0; r < knnMR; r++ {
		t := 26 + r
		a.p("VBROADCASTSS %d(AX), Z%d", 4*r, t)
		a.p("VFMADD231PS Z24, Z%d, Z%d", t, 2*r)
		a.p("VFMADD231PS Z25, Z%d, Z%d", t, 2*r+1)
	}
	a.p("ADDQ $%d, AX", 4*knnMR)
	a.p("ADDQ $%d, BX", 4*nr)
	a.p("DECQ CX")
	a.p("JNZ avx512loop")
	a.p("avx512epi:")
	a.p("MOVQ %d(R8), R9", epNX)
	a.p("MOVQ %d(R8), R10", epCthr)
	a.p("VMOVUPS (R9), Z24")
	a.p("VMOVUPS 64(R9), Z25")
	a.p("VMOVUPS (R10), Z26")
	a.p("VMOVUPS 64(R10), Z27")
	a.p("VBROADCASTSS %d(R8), Z28", epScale)
	a.p("VBROADCASTSS %d(R8), Z29", epLo)
	a.p("XORL R11, R11")
	for r := 0; r < knnMR; r++ {
		x0, x1 := 2*r, 2*r+1
		a.p("// row %d", r)
		a.p("VBROADCASTSS %d(R8), Z30", epNQ+4*r)
		a.p("VADDPS Z24, Z30, Z31")
		a.p("VADDPS Z25, Z30, Z30")
		a.p("VFMADD231PS Z28, Z%d, Z31", x0)
		a.p("VFMADD231PS Z28, Z%d, Z30", x1)
		a.p("VMAXPS Z31, Z29, Z31")
		a.p("VMAXPS Z30, Z29, Z30")
		a.p("VMOVUPS Z31, %d(R8)", epC+4*nr*r)
		a.p("VMOVUPS Z30, %d(R8)", epC+4*nr*r+64)
		a.p("VBROADCASTSS %d(R8), Z%d", epThr+4*r, x0)
		a.p("VCMPPS $2, Z%d, Z31, K1", x0)
		a.p("VCMPPS $2, Z%d, Z30, K2", x0)
		a.p("KMOVW K1, AX")
		a.p("KMOVW K2, BX")
		a.p("SHLL $16, BX")
		a.p("ORL BX, AX")
		a.p("MOVL AX, %d(R8)", epRmask+4*r)
		a.p("VCMPPS $2, Z26, Z31, K3")
		a.p("VCMPPS $2, Z27, Z30, K4")
		a.p("KMOVW K3, AX")
		a.p("KMOVW K4, BX")
		a.p("SHLL $16, BX")
		a.p("ORL BX, AX")
		a.p("ORL AX, R11")
	}
	a.p("MOVL R11, %d(R8)", epCmask)
	a.p("VZEROUPPER")
	a.p("RET")
}
