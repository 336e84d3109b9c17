package main

import "strings"

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

The AVX2 and AVX-512 kernels differ only in vector width: each (row,
centroid) is one FMA chain in the same order, so every level gives the
same bits (the portable kernel follows it with internal/fma32).`)
	a.data("assignIota", 16)
	genArgminAVX2(a, false)
	genArgminAVX2(a, true)
	genBoundsRowsAVX2(a)
	genAVX512(a, "argmin4x16x2AVX512", 2, false, false)
	genAVX512(a, "bounds4x16AVX512", 1, false, true)
	genAVX512(a, "boundsRows4x16AVX512", 1, true, true)
	genAVX512(a, "bounds4x16x2AVX512", 2, false, true)
	genAVX512(a, "boundsRows4x16x2AVX512", 2, true, true)
	genGroupArgminAVX512(a)
	genGroupArgminAVX2(a)
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
	avx2LoopHead(a, name)
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
	avx2LoopHead(a, name)
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

// genAVX512 writes the AVX-512 kernels: argmin4x16x2AVX512 (two panels per
// call), bounds4x16AVX512 and boundsRows4x16AVX512 (one panel), and their
// two-panel forms bounds4x16x2AVX512 and boundsRows4x16x2AVX512 (ids of
// both panels contiguous, both merged into the same best/bidx). Per (row,
// centroid) one FMA chain in ascending dimension, as in the AVX2 kernels,
// so all levels agree bit for bit; 4 (one panel) or 8 (two) ZMM chains:
// with 4, the FMA latency bounds the kernel on cores with two 512-bit FMA
// pipes.
//
// Registers: Z0..Z7 accumulators, (row i, panel q) → Z(4q + i); Z16..Z19
// centroid values (panel q, load set e → Z(16+2q+e));
// Z20..Z27 row values; Z28..Z31 epilogue. SI tile rows (or SI, R12, R13, R14
// the four rows), DI panel 0, BX panel stride, DX norms, R9 j0 or ids, R10
// best, R11 bidx, CX dimensions left.
func genAVX512(a *asm, name string, np int, rows, bounds bool) {
	a.blank()
	genAVX512Args(a, name, rows, bounds)
	genAVX512Dots(a, name, np, rows)
	genAVX512Argmin(a, np, bounds)
	a.p("VZEROUPPER")
	a.p("RET")
}

// avx512Acc is the accumulator register of row i and panel q.
func avx512Acc(i, q int) int { return 4*q + i }

// genAVX512Args writes an AVX-512 kernel's signature comment, TEXT line and
// argument loads (the four row pointers for the rows kernel, else the tile).
func genAVX512Args(a *asm, name string, rows, bounds bool) {
	frame := 56
	if rows {
		frame = 80
		a.p("// func %s(x0, x1, x2, x3, c, cn *float32, ids *int32, best *float32, bidx *int32, d int)", name)
	} else if bounds {
		a.p("// func %s(r, c, cn *float32, ids *int32, best *float32, bidx *int32, d int)", name)
	} else {
		a.p("// func %s(r, c, cn *float32, j0 int, best *float32, bidx *int32, d int)", name)
	}
	a.p("TEXT ·%s(SB), NOSPLIT, $0-%d", name, frame)
	if rows {
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
		return
	}
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
}

// genAVX512Dots writes the dot-product loop: one FMA chain per (row,
// panel), two dimensions per iteration (their loads and broadcasts in
// separate registers, e = 0 and 1, so that the second's overlap the
// first's FMAs), then a one-dimension tail.
func genAVX512Dots(a *asm, name string, np int, rows bool) {
	a.p("MOVQ CX, BX")
	a.p("SHLQ $6, BX") // panel stride d·16·4 bytes
	for q := 0; q < np; q++ {
		for i := 0; i < 4; i++ {
			k := avx512Acc(i, q)
			a.p("VXORPS Z%d, Z%d, Z%d", k, k, k)
		}
	}
	rowRegs := []string{"SI", "R12", "R13", "R14"}
	panel := func(q int, off int) string {
		if q == 0 {
			return sprintf("%d(DI)", off)
		}
		return sprintf("%d(DI)(BX*1)", off)
	}
	// step emits the FMAs of one dimension, loaded into the registers of
	// set e; off is the dimension's offset from the current pointers.
	step := func(e, off int) {
		for q := 0; q < np; q++ {
			a.p("VMOVUPS %s, Z%d", panel(q, 64*off), 16+2*q+e)
		}
		for i := 0; i < 4; i++ {
			x := 20 + 4*e + i
			if rows {
				a.p("VBROADCASTSS %d(%s), Z%d", 4*off, rowRegs[i], x)
			} else {
				a.p("VBROADCASTSS %d(SI), Z%d", 128*off+32*i, x)
			}
			for q := 0; q < np; q++ {
				a.p("VFMADD231PS Z%d, Z%d, Z%d", 16+2*q+e, x, avx512Acc(i, q))
			}
		}
	}
	advance := func(steps int) {
		if rows {
			for _, r := range rowRegs {
				a.p("ADDQ $%d, %s", 4*steps, r)
			}
		} else {
			a.p("ADDQ $%d, SI", 128*steps)
		}
		a.p("ADDQ $%d, DI", 64*steps)
	}
	a.p("CMPQ CX, $2")
	a.p("JLT %stail", name)
	a.p("%sloop:", name)
	step(0, 0)
	step(1, 1)
	advance(2)
	a.p("SUBQ $2, CX")
	a.p("CMPQ CX, $2")
	a.p("JGE %sloop", name)
	a.p("%stail:", name)
	a.p("TESTQ CX, CX")
	a.p("JZ %sepi", name)
	step(0, 0)
	a.p("%sepi:", name)
}

// genAVX512Argmin writes the epilogue: per row, v = ‖c‖² − 2·s per lane,
// merged into best/bidx (ties to the smaller id when bounds).
func genAVX512Argmin(a *asm, np int, bounds bool) {
	a.p("MOVL $0xc0000000, AX")
	a.p("VPBROADCASTD AX, Z28") // −2
	if !bounds {
		a.p("VPBROADCASTD R9, Z29")
		a.p("VPADDD assignIota<>+0(SB), Z29, Z29") // ids of panel 0
		a.p("MOVL $16, AX")
		a.p("VPBROADCASTD AX, Z30")
		a.p("VPADDD Z30, Z29, Z30") // ids of panel 1
	}
	for i := 0; i < 4; i++ {
		a.p("// row %d", i)
		a.p("VMOVUPS %d(R10), Z24", 64*i)
		a.p("VMOVDQU32 %d(R11), Z25", 64*i)
		for q := 0; q < np; q++ {
			k := avx512Acc(i, q)
			a.p("VFMADD213PS %d(DX), Z28, Z%d", 64*q, k)
			id := sprintf("Z%d", 29+q)
			if bounds {
				id = "Z26"
				a.p("VMOVDQU32 %d(R9), Z26", 64*q)
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
}

// genGroupArgminAVX512 writes groupArgmin4x16AVX512(best *float32, bidx
// *int32, out *float32, oid *int32): per row of a [4][16] block the
// lexicographically smallest (value, id), by a tree of lane swaps (halves,
// quarters, pairs, neighbours) with lexicographic selects. The minimum of a
// total order does not depend on the reduction order, so it equals the
// generic left-to-right scan (best never holds NaN).
func genGroupArgminAVX512(a *asm) {
	name := "groupArgmin4x16AVX512"
	a.blank()
	a.p("// func %s(best *float32, bidx *int32, out *float32, oid *int32)", name)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	a.p("MOVQ best+0(FP), SI")
	a.p("MOVQ bidx+8(FP), DI")
	a.p("MOVQ out+16(FP), R8")
	a.p("MOVQ oid+24(FP), R9")
	for r := 0; r < 4; r++ {
		a.p("// row %d", r)
		a.p("VMOVUPS %d(SI), Z0", 64*r)
		a.p("VMOVDQU32 %d(DI), Z1", 64*r)
		for _, sw := range []string{"VSHUFF32X4 $0x4E", "VSHUFF32X4 $0xB1", "VPERMILPS $0x4E", "VPERMILPS $0xB1"} {
			if strings.HasPrefix(sw, "VSHUFF32X4") {
				a.p("%s, Z0, Z0, Z2", sw)
				a.p("%s, Z1, Z1, Z3", sw)
			} else {
				a.p("%s, Z0, Z2", sw)
				a.p("%s, Z1, Z3", sw)
			}
			a.p("VCMPPS $1, Z0, Z2, K1") // other < this
			a.p("VCMPPS $0, Z0, Z2, K2") // other == this
			a.p("VPCMPGTD Z3, Z1, K3")   // this id > other id
			a.p("KANDW K2, K3, K2")
			a.p("KORW K1, K2, K1")
			a.p("VMOVUPS Z2, K1, Z0")
			a.p("VMOVDQU32 Z3, K1, Z1")
		}
		a.p("VMOVSS X0, %d(R8)", 4*r)
		a.p("VMOVD X1, %d(R9)", 4*r)
	}
	a.p("VZEROUPPER")
	a.p("RET")
}

// genGroupArgminAVX2 writes groupArgmin4x16AVX2, the AVX2 form of
// groupArgmin4x16AVX512: per row the two 8-lane halves are combined, then
// 128-bit halves, pairs and neighbours are swapped and combined.
func genGroupArgminAVX2(a *asm) {
	name := "groupArgmin4x16AVX2"
	a.blank()
	a.p("// func %s(best *float32, bidx *int32, out *float32, oid *int32)", name)
	a.p("TEXT ·%s(SB), NOSPLIT, $0-32", name)
	a.p("MOVQ best+0(FP), SI")
	a.p("MOVQ bidx+8(FP), DI")
	a.p("MOVQ out+16(FP), R8")
	a.p("MOVQ oid+24(FP), R9")
	// combine: Y0/Y2 (this value/id) with Y4/Y5 (other value/id).
	combine := func() {
		a.p("VCMPPS $1, Y0, Y4, Y6") // other < this
		a.p("VCMPPS $0, Y0, Y4, Y7") // other == this
		a.p("VPCMPGTD Y5, Y2, Y8")   // this id > other id
		a.p("VANDPS Y8, Y7, Y7")
		a.p("VORPS Y7, Y6, Y6")
		a.p("VBLENDVPS Y6, Y4, Y0, Y0")
		a.p("VBLENDVPS Y6, Y5, Y2, Y2")
	}
	for r := 0; r < 4; r++ {
		a.p("// row %d", r)
		a.p("VMOVUPS %d(SI), Y0", 64*r)
		a.p("VMOVDQU %d(DI), Y2", 64*r)
		a.p("VMOVUPS %d(SI), Y4", 64*r+32)
		a.p("VMOVDQU %d(DI), Y5", 64*r+32)
		combine()
		a.p("VPERM2F128 $0x01, Y0, Y0, Y4")
		a.p("VPERM2F128 $0x01, Y2, Y2, Y5")
		combine()
		for _, imm := range []string{"$0x4E", "$0xB1"} {
			a.p("VPERMILPS %s, Y0, Y4", imm)
			a.p("VPERMILPS %s, Y2, Y5", imm)
			combine()
		}
		a.p("VMOVSS X0, %d(R8)", 4*r)
		a.p("VMOVD X2, %d(R9)", 4*r)
	}
	a.p("VZEROUPPER")
	a.p("RET")
}

// avx2LoopHead writes the start of the AVX2 4×16 kernels' dot-product loop:
// eight zeroed accumulators Y0–Y7, a skip to the epilogue when d = 0 (CX),
// and, at the top of each step, the centroid panel's 16 values in Y8, Y9.
func avx2LoopHead(a *asm, name string) {
	for i := 0; i < 8; i++ {
		a.p("VXORPS Y%d, Y%d, Y%d", i, i, i)
	}
	a.p("TESTQ CX, CX")
	a.p("JLE %sepi", name)
	a.p("%sloop:", name)
	a.p("VMOVUPS (DI), Y8")
	a.p("VMOVUPS 32(DI), Y9")
}
