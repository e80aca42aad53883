package daemon

import (
	"time"

	"github.com/dfdtools/dfd/adapters/policy"
	"github.com/dfdtools/dfd/settings"
)

// previewPolicy is the policy of JiT previews the user asked for
// (dfd/preview): read-only queries only, DeleteTable refused, every query
// capped by dfd.preview.maxBytesBilled (0: the policy's 10 GiB default;
// dfd.preview.unlimitedBytesBilled lifts it) and labelled dfd=preview.
func previewPolicy(s settings.Settings) policy.Policy {
	return policy.Policy{
		Mode:                 policy.Preview,
		MaxBytesBilled:       max(s.PreviewMaxBytesBilled, 0),
		UnlimitedBytesBilled: s.PreviewUnlimitedBytesBilled,
	}
}

// checkPolicy is the policy of the JiT checks the daemon runs by itself
// after a compile (a file opened, an edit): a preview in which nothing
// billed runs — queries are answered from the query cache or as dry runs.
func checkPolicy(s settings.Settings) policy.Policy {
	p := previewPolicy(s)
	p.Mode = policy.Check
	return p
}

// uncappedWarning is said in every preview while
// dfd.preview.unlimitedBytesBilled is on, and when it is turned on.
const uncappedWarning = "dfd.preview.unlimitedBytesBilled is on: the queries JiT previews run have no byte cap."

// jitTimeout bounds one JiT preview: dfd.jit.timeoutMs, else
// BackendOptions.JitTimeout.
func (b *Backend) jitTimeout(s settings.Settings) time.Duration {
	if s.JitTimeout > 0 {
		return s.JitTimeout
	}
	return b.opts.JitTimeout
}

// jitCheckTimeoutFor bounds one action's JiT check after a compile:
// dfd.jit.timeoutMs, else jitCheckTimeout.
func jitCheckTimeoutFor(s settings.Settings) time.Duration {
	if s.JitTimeout > 0 {
		return s.JitTimeout
	}
	return jitCheckTimeout
}
