package clustering

// This file reproduces the random streams of faiss 1.7.3's k-means
// (faiss/utils/random.cpp), so that KMeans draws the same initial
// centroids, the same subsample and the same empty-cluster donors as
// faiss::Clustering for the same seed.

// mt19937 is the 32-bit Mersenne Twister (Matsumoto & Nishimura 1998),
// as C++'s std::mt19937: state of 624 words, seeded by the recurrence
// s[i] = 1812433253·(s[i−1] ⊕ (s[i−1] >> 30)) + i (mod 2³²), and tempered
// outputs. It is the engine inside faiss's RandomGenerator.
type mt19937 struct {
	s [624]uint32
	i int
}

func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{i: 624}
	m.s[0] = seed
	for i := 1; i < 624; i++ {
		p := m.s[i-1]
		m.s[i] = 1812433253*(p^(p>>30)) + uint32(i)
	}
	return m
}

// next returns the next 32-bit output (std::mt19937::operator()).
func (m *mt19937) next() uint32 {
	if m.i >= 624 {
		m.twist()
	}
	y := m.s[m.i]
	m.i++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

func (m *mt19937) twist() {
	const upper, lower, matrixA = 0x80000000, 0x7fffffff, 0x9908b0df
	for k := 0; k < 624; k++ {
		y := m.s[k]&upper | m.s[(k+1)%624]&lower
		v := m.s[(k+397)%624] ^ y>>1
		if y&1 != 0 {
			v ^= matrixA
		}
		m.s[k] = v
	}
	m.i = 0
}

// faissRNG is faiss 1.7.3's RandomGenerator: an mt19937 seeded with the
// seed truncated to 32 bits (its constructor casts the int64 seed to
// unsigned int).
type faissRNG struct{ mt *mt19937 }

func newFaissRNG(seed int64) faissRNG { return faissRNG{newMT19937(uint32(seed))} }

// intn is RandomGenerator::rand_int(max) of faiss 1.7.3: mt() % max
// (modulo bias included; later faiss versions use a multiply-shift instead,
// which changes every stream). max must be > 0.
func (r faissRNG) intn(max int) int { return int(uint64(r.mt.next()) % uint64(max)) }

// float32 is RandomGenerator::rand_float: mt() / float(mt.max()), all in
// float32 (the output and 2³²−1 are both rounded to float32 first, so the
// result lies in [0, 1] and can be exactly 1).
func (r faissRNG) float32() float32 {
	return float32(r.mt.next()) / float32(uint32(0xffffffff))
}

// faissRandPerm is faiss's rand_perm(perm, n, seed): the identity
// permutation of 0..n−1 shuffled by a forward Fisher–Yates pass, swapping
// position i with i + rand_int(n − i) for i = 0 … n−2.
func faissRandPerm(n int, seed int64) []int32 {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	rng := newFaissRNG(seed)
	for i := 0; i+1 < n; i++ {
		j := i + rng.intn(n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm
}
