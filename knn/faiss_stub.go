//go:build !faiss

package knn

// FaissCompiled reports whether this binary was built with -tags faiss
// (scripts/install-faiss.sh installs the library it needs). Without the tag
// the "faiss" backend is declared unavailable in Backends and New says how to get it.
const FaissCompiled = false

// FaissVersion describes the linked faiss library; without -tags faiss it
// says that faiss is not compiled in.
func FaissVersion() string {
	return "not compiled in (build with -tags faiss after scripts/install-faiss.sh)"
}
