package plots

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// minus writes a number's leading hyphen as the minus sign U+2212, as
// typeset mathematics does.
func minus(s string) string {
	if strings.HasPrefix(s, "-") {
		return "−" + s[1:]
	}
	return s
}

// logTicks are the ticks of a base-10 log axis: a labelled major tick
// at every decade 10^k in the range (every second or third decade when
// there are more than 8), minor ticks at 2…9 × 10^k, and, when fewer than
// two decades fall inside the range, labels at 2 × 10^k and 5 × 10^k as
// well, so a short axis still reads.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0 && max > min) || math.IsInf(max, 0) {
		return nil
	}
	lo, hi := int(math.Floor(math.Log10(min))), int(math.Ceil(math.Log10(max)))
	decades := 0
	for k := lo; k <= hi; k++ {
		if v := math.Pow(10, float64(k)); v >= min && v <= max {
			decades++
		}
	}
	every := 1
	for decades/every > 8 {
		every++
	}
	var out []plot.Tick
	for k := lo; k <= hi; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, float64(k))
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			switch {
			case m == 1 && (k-lo)%every == 0:
				t.Label = decadeLabel(1, k)
			case decades < 2 && (m == 2 || m == 5):
				t.Label = decadeLabel(m, k)
			}
			out = append(out, t)
		}
	}
	return out
}

// decadeLabel writes m × 10^k with a raised exponent and a true minus:
// "10^{−2}", "5×10^{−3}".
func decadeLabel(m, k int) string {
	e := "10^{" + minus(strconv.Itoa(k)) + "}"
	if m == 1 {
		return e
	}
	return fmt.Sprintf("%d×%s", m, e)
}

// roundTicks puts major ticks at the multiples of a round step (1, 2,
// 2.5 or 5 times a power of ten; integer steps only when integer is set)
// that give 4 to 7 ticks across the range, labelled with as few decimals
// as the step needs (25, 50, 75, not 25.00), and a minor tick halfway.
type roundTicks struct{ integer bool }

func (t roundTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return (plot.DefaultTicks{}).Ticks(min, max)
	}
	step := roundStep(max-min, t.integer)
	dec := 0 // the fewest decimals that write the step exactly: 2.5 → 1
	for ; dec < 10; dec++ {
		if r := step * math.Pow(10, float64(dec)); math.Abs(r-math.Round(r)) < 1e-6*r {
			break
		}
	}
	var out []plot.Tick
	for k := math.Ceil(min / step * 2); k/2*step <= max+step*1e-9; k++ {
		v := k / 2 * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		if int64(k)%2 != 0 {
			if !t.integer || v == math.Trunc(v) {
				out = append(out, plot.Tick{Value: v})
			}
			continue
		}
		out = append(out, plot.Tick{Value: v, Label: minus(strconv.FormatFloat(v, 'f', dec, 64))})
	}
	return out
}

// roundStep is the smallest round step (1, 2, 2.5, 5 × 10^k; with integer
// at least 1) that divides span into at most 6 intervals.
func roundStep(span float64, integer bool) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(span/6)))
	for {
		for _, m := range []float64{1, 2, 2.5, 5} {
			step := m * mag
			if integer && (step < 1 || step != math.Trunc(step)) {
				continue
			}
			if span/step <= 6 {
				return step
			}
		}
		mag *= 10
	}
}

// valueTicks puts major ticks exactly at the distinct x values (at most
// 12, thinned evenly) — sweeps over 32, 64, 128 … read better that way.
func valueTicks(xs []float64) plot.Ticker {
	set := map[float64]bool{}
	var u []float64
	for _, x := range xs {
		if !set[x] {
			set[x] = true
			u = append(u, x)
		}
	}
	sort.Float64s(u)
	for len(u) > 12 {
		var t []float64
		for i := 0; i < len(u); i += 2 {
			t = append(t, u[i])
		}
		u = t
	}
	ticks := make(plot.ConstantTicks, len(u))
	for i, x := range u {
		ticks[i] = plot.Tick{Value: x, Label: minus(strconv.FormatFloat(x, 'g', 6, 64))}
	}
	return ticks
}
