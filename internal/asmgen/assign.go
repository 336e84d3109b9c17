package main

// Nearest-centroid kernels of clustering (contract: argminTileGeneric,
// boundsTileGeneric and boundsRowsGeneric in clustering/assign.go). A tile is
// 4 data rows × 16 centroids (one panel); the accumulators s[i][h] hold rows
// i = 0..3 and centroid lanes 8h..8h+7 (YMM) or one whole panel (ZMM).

func genAssign(a *asm) {
	a.header(`Nearest-centroid micro-kernels of clustering (contract: the generic
kernels in assign.go). Per row i and centroid j of a 4-row tile and a panel
of 16 centroids stored dimension-major:

  s[i][j] = sum_t x_i[t] * c_j[t]         (one FMA per t, t ascending, from 0)
  v[i][j] = s[i][j]*(-2) + cn[j]          (fused; the product by -2 is exact)

then per row and lane the running best (v, id) is updated: strict v < best
(argmin: ids increase with the panel) or lexicographic (v, id) (bounds:
panels of a permuted centroid order). NaN never replaces a best.

The AVX-512 kernels take np panels at once (consecutive in memory, d×16
floats each) with one ZMM accumulator per (row, panel), so the FMA latency is
hidden by 4·np independent chains; the per-(row, centroid) accumulation is
the same sequence of FMAs as the AVX2 kernels', hence the same bits.`)
	a.data("assignIota", 16)
	genArgminAVX2(a, false)
	genArgminAVX2(a, true)
	genBoundsRowsAVX2(a)
	genArgminAVX512(a, false, 4)
	genArgminAVX512(a, true, 4)
}

// data emits a read-only table of the int32s 0..n-1.
func (a *asm) data(name string, n int) {
	a.blank()
	for i := 0; i < n; i++ {
		a.buf.WriteString(sprintf("DATA %s<>+%d(SB)/4, $%d\n", name, 4*i, i))
	}
	a.buf.WriteString(sprintf("GLOBL %s<>(SB), RODATA|NOPTR, $%d\n", name, 4*n))
}

// genArgminAVX2 writes argmin4x16AVX2 (bounds=false) or bounds4x16AVX2.
//
// Registers: Y0..Y7 accumulators (row i, half h → Y(2i+h)), Y8/Y9 centroid
// values, Y10/Y11 row values; SI rows (pre-broadcast tile [d][4][8]), DI
// centroid panel, DX norms, R9 j0 or ids, R10 best, R11 bidx, CX d.
func genArgminAVX2(a *asm, bounds bool) {
	name, fourth := "argmin4x16AVX2", "j0 int"
	if bounds {
		name, fourth = "bounds4x16AVX2", "ids *int32"
	}
	a.blank()
	a.p("// func %s(r, c, cn *float32, %s, best *float32, bidx *int32, d int)", name, fourth)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-56", name)
	a.p("MOVQ r+0(FP), SI")
	a.p("MOVQ c+8(FP), DI")
	a.p("MOVQ cn+16(FP), DX")
	if bounds {
		a.p("MOVQ ids+24(FP), R9")
	} else {
		a.p("MOVQ j0+24(FP), R9")
	}
	a.p("MOVQ best+32(FP), R10")
	a.p("MOVQ bidx+40(FP), R11")
	a.p("MOVQ d+48(FP), CX")
	for i := 0; i < 8; i++ {
		a.p("VXORPS Y%d, Y%d, Y%d", i, i, i)
	}
	a.p("TESTQ CX, CX")
	a.p("JLE %sepi", name)
	a.p("%sloop:", name)
	a.p("VMOVUPS (DI), Y8")
	a.p("VMOVUPS 32(DI), Y9")
	for i := 0; i < 4; i++ {
		x := 10 + i%2
		a.p("VMOVUPS %d(SI), Y%d", 32*i, x)
		a.p("VFMADD231PS Y8, Y%d, Y%d", x, 2*i)
		a.p("VFMADD231PS Y9, Y%d, Y%d", x, 2*i+1)
	}
	a.p("ADDQ $128, SI")
	a.p("ADDQ $64, DI")
	a.p("DECQ CX")
	a.p("JNZ %sloop", name)
	a.p("%sepi:", name)
	genAVX2Epilogue(a, bounds)
}

// genBoundsRowsAVX2 writes boundsRows4x16AVX2: bounds4x16AVX2 with the four
// rows read from their own storage and broadcast in the loop (the same FMA
// sequence, so the same bits).
func genBoundsRowsAVX2(a *asm) {
	name := "boundsRows4x16AVX2"
	a.blank()
	a.p("// func %s(x0, x1, x2, x3, c, cn *float32, ids *int32, best *float32, bidx *int32, d int)", name)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-80", name)
	a.p("MOVQ x0+0(FP), SI")
	a.p("MOVQ x1+8(FP), R12")
	a.p("MOVQ x2+16(FP), R13")
	a.p("MOVQ x3+24(FP), R14")
	a.p("MOVQ c+32(FP), DI")
	a.p("MOVQ cn+40(FP), DX")
	a.p("MOVQ ids+48(FP), R9")
	a.p("MOVQ best+56(FP), R10")
	a.p("MOVQ bidx+64(FP), R11")
	a.p("MOVQ d+72(FP), CX")
	for i := 0; i < 8; i++ {
		a.p("VXORPS Y%d, Y%d, Y%d", i, i, i)
	}
	a.p("TESTQ CX, CX")
	a.p("JLE %sepi", name)
	a.p("%sloop:", name)
	a.p("VMOVUPS (DI), Y8")
	a.p("VMOVUPS 32(DI), Y9")
	for i, reg := range []string{"SI", "R12", "R13", "R14"} {
		x := 10 + i%2
		a.p("VBROADCASTSS (%s), Y%d", reg, x)
		a.p("VFMADD231PS Y8, Y%d, Y%d", x, 2*i)
		a.p("VFMADD231PS Y9, Y%d, Y%d", x, 2*i+1)
	}
	for _, reg := range []string{"SI", "R12", "R13", "R14"} {
		a.p("ADDQ $4, %s", reg)
	}
	a.p("ADDQ $64, DI")
	a.p("DECQ CX")
	a.p("JNZ %sloop", name)
	a.p("%sepi:", name)
	genAVX2Epilogue(a, true)
}

// genAVX2Epilogue turns Y0..Y7 into v and updates best/bidx. Y12 = −2,
// Y14/Y15 the ids of lanes 0..7 / 8..15, Y8..Y11 and Y13 temporaries.
func genAVX2Epilogue(a *asm, bounds bool) {
	a.p("MOVL $0xc0000000, AX") // float32(−2)
	a.p("VMOVD AX, X12")
	a.p("VBROADCASTSS X12, Y12")
	if bounds {
		a.p("VMOVDQU (R9), Y14")
		a.p("VMOVDQU 32(R9), Y15")
	} else {
		a.p("VMOVD R9, X13")
		a.p("VPBROADCASTD X13, Y13")
		a.p("VPADDD assignIota<>+0(SB), Y13, Y14")
		a.p("VPADDD assignIota<>+32(SB), Y13, Y15")
	}
	for k := 0; k < 8; k++ {
		h := k % 2
		o := 32 * k
		a.p("// row %d, lanes %d..%d", k/2, 8*h, 8*h+7)
		a.p("VFMADD213PS %d(DX), Y12, Y%d", 32*h, k)
		a.p("VMOVUPS %d(R10), Y10", o)
		a.p("VMOVDQU %d(R11), Y13", o)
		a.p("VCMPPS $1, Y10, Y%d, Y11", k) // v < best
		if bounds {
			a.p("VCMPPS $0, Y10, Y%d, Y8", k)  // v == best
			a.p("VPCMPGTD Y%d, Y13, Y9", 14+h) // bidx > id
			a.p("VANDPS Y9, Y8, Y8")
			a.p("VORPS Y8, Y11, Y11")
		}
		a.p("VBLENDVPS Y11, Y%d, Y10, Y10", k)
		a.p("VMOVUPS Y10, %d(R10)", o)
		a.p("VBLENDVPS Y11, Y%d, Y13, Y13", 14+h)
		a.p("VMOVDQU Y13, %d(R11)", o)
	}
	a.p("VZEROUPPER")
	a.p("RET")
}

// genArgminAVX512 writes argmin4x16xNAVX512 / bounds4x16xNAVX512: the AVX2
// kernel over np consecutive panels at once, one ZMM accumulator per (row,
// panel): Z(np·i + q) for row i and panel q. The best/bidx update applies the
// panels in increasing q, as np successive single-panel calls would.
//
// Arguments: r, c, cn, j0 / ids (np·16 ids), best, bidx, d; c and cn point at
// the first panel (panels are d×16 floats apart, norms 16 apart).
func genArgminAVX512(a *asm, bounds bool, np int) {
	name, fourth := sprintf("argmin4x16x%dAVX512", np), "j0 int"
	if bounds {
		name, fourth = sprintf("bounds4x16x%dAVX512", np), "ids *int32"
	}
	a.blank()
	a.p("// func %s(r, c, cn *float32, %s, best *float32, bidx *int32, d int)", name, fourth)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-56", name)
	a.p("MOVQ r+0(FP), SI")
	a.p("MOVQ c+8(FP), DI")
	a.p("MOVQ cn+16(FP), DX")
	if bounds {
		a.p("MOVQ ids+24(FP), R9")
	} else {
		a.p("MOVQ j0+24(FP), R9")
	}
	a.p("MOVQ best+32(FP), R10")
	a.p("MOVQ bidx+40(FP), R11")
	a.p("MOVQ d+48(FP), CX")
	// BX = panel stride in bytes (d·64); R12 = 3·BX for panel 3.
	a.p("MOVQ CX, BX")
	a.p("SHLQ $6, BX")
	a.p("LEAQ (BX)(BX*2), R12")
	acc := func(i, q int) int { return np*i + q }
	for i := 0; i < 4*np; i++ {
		a.p("VXORPS Z%d, Z%d, Z%d", i, i, i)
	}
	a.p("TESTQ CX, CX")
	a.p("JLE %sepi", name)
	a.p("%sloop:", name)
	panelAddr := func(q int) string {
		switch q {
		case 0:
			return "(DI)"
		case 1:
			return "(DI)(BX*1)"
		case 2:
			return "(DI)(BX*2)"
		case 3:
			return "(DI)(R12*1)"
		}
		panic("np > 4")
	}
	for q := 0; q < np; q++ {
		a.p("VMOVUPS %s, Z%d", panelAddr(q), 16+q)
	}
	for i := 0; i < 4; i++ {
		x := 24 + i
		a.p("VBROADCASTSS %d(SI), Z%d", 32*i, x)
		for q := 0; q < np; q++ {
			a.p("VFMADD231PS Z%d, Z%d, Z%d", 16+q, x, acc(i, q))
		}
	}
	a.p("ADDQ $128, SI")
	a.p("ADDQ $64, DI")
	a.p("DECQ CX")
	a.p("JNZ %sloop", name)
	a.p("%sepi:", name)
	a.p("MOVL $0xc0000000, AX")
	a.p("VPBROADCASTD AX, Z28") // −2
	if !bounds {
		a.p("VPBROADCASTD R9, Z29")
		a.p("VPADDD assignIota<>+0(SB), Z29, Z29") // ids of panel 0
		a.p("MOVL $16, AX")
		a.p("VPBROADCASTD AX, Z30") // id step per panel
	}
	for i := 0; i < 4; i++ {
		a.p("// row %d", i)
		a.p("VMOVUPS %d(R10), Z24", 64*i)
		a.p("VMOVDQU32 %d(R11), Z25", 64*i)
		for q := 0; q < np; q++ {
			k := acc(i, q)
			a.p("VFMADD213PS %d(DX), Z28, Z%d", 64*q, k)
			id := "Z26"
			if bounds {
				a.p("VMOVDQU32 %d(R9), Z26", 64*q)
			} else if q == 0 {
				id = "Z29"
			} else {
				a.p("VPADDD Z30, %s, Z26", map[bool]string{true: "Z29", false: "Z26"}[q == 1])
			}
			a.p("VCMPPS $1, Z24, Z%d, K1", k) // v < best
			if bounds {
				a.p("VCMPPS $0, Z24, Z%d, K2", k) // v == best
				a.p("VPCMPGTD %s, Z25, K3", id)   // bidx > id
				a.p("KANDW K2, K3, K2")
				a.p("KORW K1, K2, K1")
			}
			a.p("VMOVUPS Z%d, K1, Z24", k)
			a.p("VMOVDQU32 %s, K1, Z25", id)
		}
		a.p("VMOVUPS Z24, %d(R10)", 64*i)
		a.p("VMOVDQU32 Z25, %d(R11)", 64*i)
	}
	a.p("VZEROUPPER")
	a.p("RET")
}
