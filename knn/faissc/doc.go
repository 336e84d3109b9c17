// Package faissc is dmlbench's thin cgo binding to the standard faiss C API
// (faiss 1.7.x, libfaiss_c), shaped like go-faiss: Index (IndexFlatL2 /
// IndexFlatIP) with Add, Search, Ntotal, D and Free, plus k-means through
// faiss's Clustering object (KMeans).
//
// The binding is compiled only with the build tag faiss (without it this
// package is empty). It is a package of its own, not part of knn, because Go
// refuses cgo in a package that also holds Go assembly (knn's Exact kernel).
// Install the library with scripts/install-faiss.sh (Debian 12, root): it
// builds faiss's c_api sources against Debian's libfaiss.a into
// /usr/local/lib/libfaiss_c.so and stamps the version for Version.
//
// Conventions (see knn/doc.go for the k-NN contract built on top):
//
//   - Every C object is owned by one Go value and freed explicitly (Free);
//     KMeans frees everything it creates before returning.
//   - faiss_get_last_error() is thread-local, so each C helper copies the
//     message inside the call that failed; failures wrap ErrFaiss.
//   - Thread counts are set in the same C call as the work they govern
//     (omp_set_num_threads is per OS thread; openblas_set_num_threads, found
//     with dlsym when the BLAS is OpenBLAS, is global).
package faissc
