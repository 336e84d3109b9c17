package gpu

// The test helpers device_metrics_test.go (package gpu_test) uses.
var (
	RequireDevice = requireDevice
	ClassData     = classData
	Timed         = timed
	SameNeighbors = sameNeighbors
)
