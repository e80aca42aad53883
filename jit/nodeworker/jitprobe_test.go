package nodeworker_test

import "github.com/dfdtools/dfd/internal/testkit/jitprobe"

// The scripted warehouse, recorder, oracle JSON and probe programs are shared
// with package compile's JiT parity test (internal/testkit/jitprobe); short local names keep the cases readable.
type (
	jitWarehouse = jitprobe.Warehouse
	recordedCall = jitprobe.RecordedCall
	jitRecorder  = jitprobe.Recorder
	oracleBuild  = jitprobe.OracleBuild
	oracleInput  = jitprobe.OracleInput
	oracleOutput = jitprobe.OracleOutput
)

var (
	jitTarget       = jitprobe.Target
	engineError     = jitprobe.EngineError
	previewStart    = jitprobe.PreviewStart
	newJitWarehouse = jitprobe.NewWarehouse
	sameError       = jitprobe.SameError
	sortedStrings   = jitprobe.SortedStrings
	decodeResponse  = jitprobe.DecodeResponse
)

const (
	noWorkerMessage      = jitprobe.NoWorkerMessage
	probeEverything      = jitprobe.ProbeEverything
	probeIncremental     = jitprobe.ProbeIncremental
	probeCaughtExecute   = jitprobe.ProbeCaughtExecute
	probeOperationArray  = jitprobe.ProbeOperationArray
	probeUncaughtGet     = jitprobe.ProbeUncaughtGet
	probeUncaughtList    = jitprobe.ProbeUncaughtList
	probeUncaughtExecute = jitprobe.ProbeUncaughtExecute
	probeUncaughtDelete  = jitprobe.ProbeUncaughtDelete
	probeUndeclaredRef   = jitprobe.ProbeUndeclaredRef
	probeTypeError       = jitprobe.ProbeTypeError
	probeThrowString     = jitprobe.ProbeThrowString
	probeThrowError      = jitprobe.ProbeThrowError
	probeSyntaxError     = jitprobe.ProbeSyntaxError
	probeNeverSettles    = jitprobe.ProbeNeverSettles
	probeNonStringQuery  = jitprobe.ProbeNonStringQuery
)
