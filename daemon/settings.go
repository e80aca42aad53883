package daemon

import (
	"time"

	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/lsp"
)

// previewPolicy is the policy JiT previews and the JiT checks after a
// compile run under: read-only queries only, DeleteTable refused, and
// dfd.preview.maxBytesBilled as every query's byte limit (0: none, the
// policy's default).
func previewPolicy(s lsp.Settings) policy.Policy {
	return policy.Policy{Mode: policy.Preview, MaxBytesBilled: max(s.PreviewMaxBytesBilled, 0)}
}

// jitTimeout bounds one JiT preview: dfd.jit.timeoutMs, else
// BackendOptions.JitTimeout.
func (b *Backend) jitTimeout(s lsp.Settings) time.Duration {
	if s.JitTimeout > 0 {
		return s.JitTimeout
	}
	return b.opts.JitTimeout
}

// jitCheckTimeoutFor bounds one action's JiT check after a compile:
// dfd.jit.timeoutMs, else jitCheckTimeout.
func jitCheckTimeoutFor(s lsp.Settings) time.Duration {
	if s.JitTimeout > 0 {
		return s.JitTimeout
	}
	return jitCheckTimeout
}
