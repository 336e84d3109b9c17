// CUDA kernels of the dmlbench GPU k-NN backend (package knn/gpu).
//
// Compiled to PTX without the CUDA toolkit by clang (see gen.go and
// docs/gpu.md); no CUDA headers are used, so the few builtins needed are
// declared below. Every kernel has a line-by-line counterpart in emulate.go,
// which the unit tests run on the CPU.
//
// Exactness. The dot product of every (query, row) pair is one sequential
// chain of fused multiply-adds over p = 0..D−1, starting from +0, exactly as
// in knn.Exact's AVX2/AVX-512 micro-kernels (one VFMADD231PS lane per pair),
// and the epilogue D = max(lo, fma(scale, acc, nq + nx)) is that of the
// assembly kernel. The file is compiled with -ffp-contract=off and uses
// explicitly rounded operations, so no other contraction or reassociation
// can happen; subnormals are not flushed (no -fcuda-flush-denormals-to-zero),
// like the CPU.

#define GLOBAL extern "C" __attribute__((global))
#define DEVICE static __attribute__((device)) __attribute__((always_inline))
#define SHARED __attribute__((shared))

typedef unsigned long long u64;
typedef unsigned int u32;

DEVICE u32 tid_x() { return __nvvm_read_ptx_sreg_tid_x(); }
DEVICE u32 tid_y() { return __nvvm_read_ptx_sreg_tid_y(); }
DEVICE u32 ctaid_x() { return __nvvm_read_ptx_sreg_ctaid_x(); }
DEVICE u32 ctaid_y() { return __nvvm_read_ptx_sreg_ctaid_y(); }
DEVICE u32 ntid_x() { return __nvvm_read_ptx_sreg_ntid_x(); }
DEVICE void sync() { __syncthreads(); }
DEVICE float fma_rn(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
DEVICE float add_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
DEVICE u32 atomic_inc(u32 *p) { return (u32)__nvvm_atom_add_gen_i((int *)p, 1); }

#define EMPTY 0xFFFFFFFFFFFFFFFFull

// okey: the order-preserving bits of a float (−0 folded into +0), as
// orderedBits in knn/topk.go; key = okey(D) << 32 | row.
DEVICE u32 okey(float v) {
	if (v == 0.0f) v = 0.0f;
	u32 b;
	__builtin_memcpy(&b, &v, 4);
	return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

// Tile of the distance kernel: 64 queries × 64 rows per block of 16×16
// threads, each thread a 4×4 register tile (rows ty+16·i, columns tx+16·j),
// operands staged through shared memory 16 dimensions at a time.
#define TQ 64
#define TX 64
#define TD 16

DEVICE float epilogue(float acc, float nq, float nx, float scale, float lo) {
	float v = fma_rn(scale, acc, add_rn(nq, nx));
	return (v < lo) ? lo : v;  // NaN stays NaN
}

// watch_count: a candidate key below the query's watch bound is counted in
// the bucket between two consecutive watched keys (binary search); a
// watched row itself is not counted.
DEVICE void watch_count(u64 key, const u64 *wk, u32 *wc, int alive) {
	int lo = 0, hi = alive;
	while (lo < hi) {
		int m = (lo + hi) >> 1;
		if (wk[m] < key) lo = m + 1; else hi = m;
	}
	if (wk[lo] != key) __nvvm_atom_add_gen_i((int *)&wc[lo], 1);
}

// dist_filter offers rows [x0, x0+xn) to the qb queries from q0: every pair
// whose key is below the query's bound thr goes into its candidate buffer
// (slot = atomic count; slots ≥ cap are dropped and make merge flag the
// query for a re-run); with a watch, keys below the watch bound are counted.
// rerun: only queries with ovf set take part, and nothing is counted.
GLOBAL void dist_filter(const float *Q, const float *X, const float *nq, const float *nx,
                        int d, int q0, int qb, int x0, int xn, int excl, float scale, float lo,
                        const u64 *thr, u64 *cand, u32 *cnt, int cap, const int *ovf, int rerun,
                        const int *woff, const u64 *wkeys, u32 *wcnt, const int *alive,
                        const u64 *wbound, int watch) {
	SHARED float qs[TD][TQ + 1];
	SHARED float xs[TD][TX + 1];
	int tx = tid_x(), ty = tid_y(), t = ty * 16 + tx;
	int lq0 = ctaid_y() * TQ; // first local query of the block
	int lx0 = ctaid_x() * TX; // first row offset of the block in the tile
	float acc[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
	for (int d0 = 0; d0 < d; d0 += TD) {
		// 64×16 values per operand, 4 per thread: row r = t/4... spread so
		// that consecutive threads read consecutive dimensions.
		for (int s = t; s < TQ * TD; s += 256) {
			int r = s / TD, p = s % TD;
			int gq = lq0 + r, gx = lx0 + r;
			qs[p][r] = (gq < qb && d0 + p < d) ? Q[(long long)(q0 + gq) * d + d0 + p] : 0.0f;
			xs[p][r] = (gx < xn && d0 + p < d) ? X[(long long)(x0 + gx) * d + d0 + p] : 0.0f;
		}
		sync();
		int pe = d - d0 < TD ? d - d0 : TD;
		for (int p = 0; p < pe; p++) {
			float a[4], b[4];
			for (int i = 0; i < 4; i++) a[i] = qs[p][ty + 16 * i];
			for (int j = 0; j < 4; j++) b[j] = xs[p][tx + 16 * j];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++) acc[i][j] = fma_rn(a[i], b[j], acc[i][j]);
		}
		sync();
	}
	for (int i = 0; i < 4; i++) {
		int li = lq0 + ty + 16 * i;
		if (li >= qb) continue;
		if (rerun && !ovf[li]) continue;
		int gi = q0 + li;
		u64 th = thr[li];
		u64 wb = watch && !rerun ? wbound[li] : 0;
		for (int j = 0; j < 4; j++) {
			int lj = lx0 + tx + 16 * j;
			if (lj >= xn) continue;
			int gj = x0 + lj;
			if (excl && gj == gi) continue;
			float v = epilogue(acc[i][j], nq[gi], nx[gj], scale, lo);
			if (v != v) continue;
			u64 key = ((u64)okey(v) << 32) | (u32)gj;
			if (key < wb) watch_count(key, wkeys + woff[li], wcnt + woff[li], alive[li]);
			if (key < th) {
				u32 pos = atomic_inc(&cnt[li]);
				if (pos < (u32)cap) cand[(long long)li * cap + pos] = key;
			}
		}
	}
}

// merge_topk: one block per query folds the candidates into the sorted
// top-k: top ∪ cand is bitonic-sorted in at most S = 2^⌈log2(k+cap)⌉ slots (shared
// memory when S·8 bytes fit in smem, else the query's slice of scratch),
// duplicates are dropped after a re-run (a row already in the top-k may be
// offered again), and the first k keys are kept.
GLOBAL void merge_topk(u64 *top, u64 *thr, const u64 *cand, u32 *cnt, int *ovf, u32 *novf,
                       int k, int cap, int S, int rerun, u64 *scratch, int smem) {
	extern SHARED u64 sh[];
	int i = ctaid_x(), t = tid_x(), nt = ntid_x();
	u32 n = cnt[i];
	if (n == 0) {
		if (t == 0) ovf[i] = 0;
		return;
	}
	u32 m = n < (u32)cap ? n : (u32)cap;
	u64 *s = smem ? sh : scratch + (long long)i * S;
	u64 *tp = top + (long long)i * k;
	int Sq = 1; // sort only 2^⌈log2(k + m)⌉ ≤ S slots: usually m ≪ cap
	while (Sq < k + (int)m) Sq <<= 1;
	for (int j = t; j < Sq; j += nt)
		s[j] = j < k ? tp[j] : (j < k + (int)m ? cand[(long long)i * cap + (j - k)] : EMPTY);
	sync();
	for (int size = 2; size <= Sq; size <<= 1) {
		for (int stride = size >> 1; stride > 0; stride >>= 1) {
			for (int j = t; j < Sq; j += nt) {
				int l = j ^ stride;
				if (l > j) {
					u64 a = s[j], b = s[l];
					bool up = (j & size) == 0;
					if ((a > b) == up) { s[j] = b; s[l] = a; }
				}
			}
			sync();
		}
	}
	if (rerun) {
		if (t == 0) {
			int w = 0;
			u64 last = EMPTY;
			for (int j = 0; j < Sq && w < k; j++) {
				u64 v = s[j];
				if (v == EMPTY) break;
				if (v != last) tp[w++] = v;
				last = v;
			}
			for (; w < k; w++) tp[w] = EMPTY;
		}
	} else {
		for (int j = t; j < k; j += nt) tp[j] = s[j];
	}
	sync();
	if (t == 0) {
		thr[i] = tp[k - 1];
		ovf[i] = n > (u32)cap;
		if (n > (u32)cap) atomic_inc(novf);
		cnt[i] = 0;
	}
}

// watch_keys: the key of each watched (query, row) pair, with the distance
// kernel's arithmetic (the order of the fma chain is the same).
GLOBAL void watch_keys(const float *Q, const float *X, const float *nq, const float *nx,
                       int d, int q0, const int *wq, const int *wids, int W, float scale,
                       float lo, u64 *wkeys) {
	int t = ctaid_x() * ntid_x() + tid_x();
	if (t >= W) return;
	int gi = q0 + wq[t], gj = wids[t];
	const float *a = Q + (long long)gi * d, *b = X + (long long)gj * d;
	float acc = 0.0f;
	for (int p = 0; p < d; p++) acc = fma_rn(a[p], b[p], acc);
	float v = epilogue(acc, nq[gi], nx[gj], scale, lo);
	wkeys[t] = ((u64)okey(v) << 32) | (u32)gj;
}

// watch_sort: one thread per query sorts its watched keys (insertion sort;
// lists are short) and sets alive = min(len, maxRank) and the bound.
GLOBAL void watch_sort(const int *woff, u64 *wkeys, int *alive, u64 *wbound, int qb, int maxRank) {
	int i = ctaid_x() * ntid_x() + tid_x();
	if (i >= qb) return;
	u64 *w = wkeys + woff[i];
	int n = woff[i + 1] - woff[i];
	for (int a = 1; a < n; a++) {
		u64 v = w[a];
		int b = a;
		while (b > 0 && w[b - 1] > v) { w[b] = w[b - 1]; b--; }
		w[b] = v;
	}
	int al = n < maxRank ? n : maxRank;
	alive[i] = al;
	wbound[i] = al > 0 ? w[al - 1] : 0;
}

// watch_shrink: after a tile, drop the watched rows that can no longer rank
// within maxRank (counts only grow), as watchState.count does on the CPU.
GLOBAL void watch_shrink(const int *woff, const u64 *wkeys, const u32 *wcnt, int *alive,
                         u64 *wbound, int qb, int maxRank) {
	int i = ctaid_x() * ntid_x() + tid_x();
	if (i >= qb) return;
	int off = woff[i], a = alive[i];
	long long tot = 0;
	for (int b = 0; b < a; b++) tot += wcnt[off + b];
	while (a > 0 && a + tot > maxRank) {
		a--;
		tot -= wcnt[off + a];
	}
	alive[i] = a;
	wbound[i] = a > 0 ? wkeys[off + a - 1] : 0;
}

// assign_argmin: nearest centroid of each of n rows among kc centroids, with
// the arithmetic of clustering.NearestCentroids' FMA kernel: acc = fma chain
// over d from +0, v = fma(acc, −2, cn[j]), the lexicographically smallest
// (v, j) wins (NaN never; (+Inf, 0) when nothing is smaller). 64 rows per
// block, centroids streamed 64 at a time through the distance tile; each
// thread keeps the best of its 4 columns for its 4 rows, then thread tx = 0
// reduces the 16 per-row candidates. The host adds the row norm.
GLOBAL void assign_argmin(const float *X, const float *C, const float *cn, int n, int kc, int d,
                          float *bestv, int *besti) {
	SHARED float xs[TD][TQ + 1];
	SHARED float cs[TD][TX + 1];
	SHARED float rv[TQ][17];
	SHARED int ri[TQ][17];
	int tx = tid_x(), ty = tid_y(), t = ty * 16 + tx;
	int r0 = ctaid_x() * TQ;
	float bv[4];
	int bi[4];
	for (int i = 0; i < 4; i++) { bv[i] = __builtin_inff(); bi[i] = 0; }
	for (int c0 = 0; c0 < kc; c0 += TX) {
		float acc[4][4];
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
		for (int d0 = 0; d0 < d; d0 += TD) {
			for (int s = t; s < TQ * TD; s += 256) {
				int r = s / TD, p = s % TD;
				xs[p][r] = (r0 + r < n && d0 + p < d) ? X[(long long)(r0 + r) * d + d0 + p] : 0.0f;
				cs[p][r] = (c0 + r < kc && d0 + p < d) ? C[(long long)(c0 + r) * d + d0 + p] : 0.0f;
			}
			sync();
			int pe = d - d0 < TD ? d - d0 : TD;
			for (int p = 0; p < pe; p++) {
				float a[4], b[4];
				for (int i = 0; i < 4; i++) a[i] = xs[p][ty + 16 * i];
				for (int j = 0; j < 4; j++) b[j] = cs[p][tx + 16 * j];
				for (int i = 0; i < 4; i++)
					for (int j = 0; j < 4; j++) acc[i][j] = fma_rn(a[i], b[j], acc[i][j]);
			}
			sync();
		}
		for (int j = 0; j < 4; j++) {
			int c = c0 + tx + 16 * j;
			if (c >= kc) continue;
			for (int i = 0; i < 4; i++) {
				float v = fma_rn(acc[i][j], -2.0f, cn[c]);
				if (v < bv[i] || (v == bv[i] && c < bi[i])) { bv[i] = v; bi[i] = c; }
			}
		}
	}
	for (int i = 0; i < 4; i++) { rv[ty + 16 * i][tx] = bv[i]; ri[ty + 16 * i][tx] = bi[i]; }
	sync();
	if (tx == 0) {
		for (int i = 0; i < 4; i++) {
			int r = ty + 16 * i;
			if (r0 + r >= n) continue;
			float v = rv[r][0];
			int id = ri[r][0];
			for (int l = 1; l < 16; l++) {
				float w = rv[r][l];
				int wi = ri[r][l];
				if (w < v || (w == v && wi < id)) { v = w; id = wi; }
			}
			bestv[r0 + r] = v;
			besti[r0 + r] = id;
		}
	}
}
