//go:build amd64 && !purego

#include "textflag.h"

// func adamAVX2(data, grad, m, v *float32, n int, k *adamConsts) float64
//
// Adam.Step's update on n elements (n a multiple of 4), four per YMM in
// float64, with the scalar loop's operations in its order (no FMA, so
// every result is bit-identical to it). Returns the sum of the gradients
// (in another order: only its finiteness is used).
// k: wd, b1, 1-b1, b2, 1-b2, step, 1/sqrt(bc2), eps.
TEXT ·adamAVX2(SB), NOSPLIT, $0-56
	MOVQ data+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ k+40(FP), AX
	VBROADCASTSD 0(AX), Y8   // wd
	VBROADCASTSD 8(AX), Y9   // b1
	VBROADCASTSD 16(AX), Y10 // 1-b1
	VBROADCASTSD 24(AX), Y11 // b2
	VBROADCASTSD 32(AX), Y12 // 1-b2
	VBROADCASTSD 40(AX), Y13 // step
	VBROADCASTSD 48(AX), Y14 // 1/sqrt(bc2)
	VBROADCASTSD 56(AX), Y15 // eps
	VXORPD Y7, Y7, Y7        // gradient sum
	XORQ BX, BX
	TESTQ CX, CX
	JLE done
loop:
	VCVTPS2PD (SI)(BX*4), Y0 // g32
	VADDPD Y0, Y7, Y7
	VCVTPS2PD (DI)(BX*4), Y1 // th
	VMULPD Y1, Y8, Y2        // wd*th
	VADDPD Y2, Y0, Y2        // g = g32 + wd*th
	VCVTPS2PD (R8)(BX*4), Y3
	VMULPD Y3, Y9, Y3        // b1*m
	VMULPD Y2, Y10, Y4       // (1-b1)*g
	VADDPD Y4, Y3, Y3        // mi
	VCVTPS2PD (R9)(BX*4), Y5
	VMULPD Y5, Y11, Y5       // b2*v
	VMULPD Y2, Y12, Y6       // (1-b2)*g
	VMULPD Y2, Y6, Y6        // (1-b2)*g*g
	VADDPD Y6, Y5, Y5        // vi
	VCVTPD2PSY Y3, X4
	VMOVUPS X4, (R8)(BX*4)   // m = float32(mi)
	VCVTPD2PSY Y5, X6
	VMOVUPS X6, (R9)(BX*4)   // v = float32(vi)
	VSQRTPD Y5, Y5
	VMULPD Y5, Y14, Y5       // sqrt(vi)*invBc2
	VADDPD Y5, Y15, Y5       // + eps
	VMULPD Y3, Y13, Y3       // step*mi
	VDIVPD Y5, Y3, Y3        // step*mi / (...)
	VSUBPD Y3, Y1, Y1        // th - ...
	VCVTPD2PSY Y1, X1
	VMOVUPS X1, (DI)(BX*4)
	ADDQ $4, BX
	CMPQ BX, CX
	JLT loop
done:
	VEXTRACTF128 $1, Y7, X0
	VADDPD X0, X7, X7
	VHADDPD X7, X7, X7
	VZEROUPPER
	MOVSD X7, ret+48(FP)
	RET
