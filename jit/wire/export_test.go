package wire

import "time"

// SetStallTimeout lets tests shorten the stall timeout.
func SetStallTimeout(r *Reader, d time.Duration) { r.stall = d }
