package daemon

import "github.com/dfdtools/dfd/jit"

// poolStats implements poolStatser: the workers of the project's pools
// (the compile pool and, when compiles run on another engine, the JiT
// pool), added up.
func (r *pooled) poolStats() jit.PoolStats {
	st := r.pool.Stats()
	if r.jitPool != nil && r.jitPool != r.pool {
		j := r.jitPool.Stats()
		st.Idle += j.Idle
		st.Busy += j.Busy
		st.Live += j.Live
	}
	return st
}
