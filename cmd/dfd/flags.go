package main

import (
	"flag"
	"io"
)

// parseInterspersed parses flags that may come before or after positional
// arguments (`dfd compile DIR --json` as well as `dfd compile --json DIR`),
// which the standard flag package alone does not allow.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if rest[0] == "--" {
			return append(positional, rest[1:]...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("dfd "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
