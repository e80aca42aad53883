package main

import (
	"context"

	"github.com/dfdtools/dfd/jit"
)

// runWorker is `dfd worker`: a compile/JiT worker process that dfd's own
// pool starts (see package jit). It speaks length-delimited protobuf frames
// on stdin/stdout, logs to stderr, and exits when stdin reaches EOF.
func runWorker(ctx context.Context, env *cmdEnv, args []string) int {
	return jit.WorkerMain(ctx, args, env.stdin, env.stdout, env.stderr)
}
