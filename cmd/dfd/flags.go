package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// byteSize is a flag value in bytes, written as a number of bytes or with a
// binary unit: 512MiB, 2GiB (K, M, G and KB, MB, GB mean the same, as in
// node's --max-old-space-size).
type byteSize int64

func (b byteSize) String() string {
	n := int64(b)
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	num := strings.TrimRight(s, "KMGkmgIiBb")
	unit := strings.ToUpper(s[len(num):])
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "IB"), "B")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30}
	sh, ok := shift[unit]
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if !ok || err != nil || n < 0 || n > (1<<62)>>sh {
		return fmt.Errorf("%q is not a size (examples: 512MiB, 2GiB, 1073741824)", s)
	}
	*b = byteSize(n << sh)
	return nil
}
