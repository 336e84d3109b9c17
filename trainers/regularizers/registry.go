package regularizers

import "github.com/dmlbench/dmlbench/internal/registry"

// Info documents one regulariser for `dmlbench list regularizers`. The
// regularisers take different settings (a probability, a parameter tuple, a
// loss hyper-parameter), so each is switched on by its own flags, named in
// Flags; the registry is what lists them and rejects duplicate names.
type Info struct {
	Name    string
	Flags   string // how to switch it on (run flags; suite syntax)
	Summary string // one line with its source
}

var reg = registry.New[Info]("regularizer")

// Register adds a regulariser; a duplicate name panics.
func Register(i Info) { reg.Register(i.Name, i) }

// All lists the regularisers sorted by name.
func All() []Info { return reg.Values() }

func init() {
	Register(Info{"rho", "--rho-reg P (suite: rho[=P])",
		"ρ-regularisation: a mined negative is swapped for a positive with probability P, default 0.2 (R-variants; Roth et al. 2020, §5 and supp. §B)"})
	Register(Info{"das", "--das [--das-params T,K,Z,rs,rb]",
		"DAS: T extra embeddings per anchor by discriminative feature scaling + memorized transformation shifting, (3,4,10,0.01,0.01) (Liu et al. 2022, §3)"})
	Register(Info{"mixup", "--mixup [--mixup-alpha A]",
		"manifold mixup of embeddings, λ ~ Beta(2,2), loss weighted by label share (Roth et al. 2020, supp. §H eq. 31)"})
	Register(Info{"simix", "--hyper simix=1 (recallk, smoothap)",
		"SiMix: virtual items from mixed same-class similarities, as queries and database items (Patel et al. 2024, §3.3 eqs. 9–10)"})
}
