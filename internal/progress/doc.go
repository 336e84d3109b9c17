// Package progress draws the progress of the long commands on a terminal:
// eval's stages (a bar for a stage that reports its progress, a spinner
// between such stages, both after a delay so quick runs print nothing) and
// a training run (a bar, or a line per epoch when not a terminal, with the
// evaluated epochs' metrics and the best epoch).
package progress
