// Package partial stores the per-query results of one query shard
// (metrics.Partial) in a versioned file and reads a directory of them back
// for metrics.Merge.
//
// A partial file, DIR/partial-IIIII-of-NNNNN.json, is JSON: the format
// name and version, the shard and its query rows, checksums (CRC-32C, CRC-32) of the
// inputs, the settings the terms depend on, the eval command line that
// wrote it, and for every k-NN value its per-query terms as base64 of
// little-endian IEEE-754 float64 (NaN where a query does not count), in
// query-row order. Terms, not block sums, are stored, so any shard
// boundaries merge into the same bits: metrics.Mean adds them in its fixed
// 2 048-row block order.
package partial
