package sim

// MemoryEstimateOn is MemoryEstimate on a host with hostCores cores, for
// the tests of package sim_test, which compare it with peaks measured on
// a host of known size.
func (c *TPCCConfig) MemoryEstimateOn(hostCores int) MemoryEstimate {
	return c.memoryEstimate(hostCores)
}
