// Package losses implements deep-metric-learning losses, one file per loss,
// behind one interface and a registry: those compared by Roth et al. 2020,
// Fehérvári et al. 2019 and Patel et al. 2024, and the message-passing
// losses of Seidenschwarz et al. 2021.
//
// A Loss sees only the batch embeddings (B×D, float32, row-major) and their
// labels. It returns the loss value and dL/dE; the trainer back-propagates
// dL/dE through the model (so losses are tested in isolation with finite
// differences, and the same code serves multistage back-propagation, Patel et al. 2024
// Alg. 1). Learnable loss parameters (proxies, the margin β, class centres)
// are owned by the loss and exposed as Params for the trainer's optimiser.
package losses
