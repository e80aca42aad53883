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

// listFlag is a yargs "array" option with the CLI's splitCommas coercion:
// every value given, split at commas. given reports the flag was used at
// all (yargs' `[]` is truthy), even with no values.
type listFlag struct {
	values []string
	given  bool
}

func (l *listFlag) String() string { return strings.Join(l.values, ",") }

func (l *listFlag) Set(s string) error {
	l.given = true
	if s != arrayFlagNoValue && s != "" {
		l.values = append(l.values, strings.Split(s, ",")...)
	}
	return nil
}

// arrayFlagNoValue stands for an array flag given without any value.
const arrayFlagNoValue = "\x00"

// expandArrayFlags rewrites yargs' array syntax, `--name a b c` (every
// following argument up to the next one that starts with "-"), into
// `--name=a --name=b --name=c` for the flag package; `--name=a,b` passes
// as it is. A positional argument after such a flag is one of its values,
// as in the CLI.
func expandArrayFlags(args []string, names ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name := ""
		for _, n := range names {
			if a == "--"+n || a == "-"+n {
				name = n
			}
		}
		if name == "" {
			out = append(out, a)
			continue
		}
		n := 0
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			n++
			out = append(out, "--"+name+"="+args[i])
		}
		if n == 0 {
			out = append(out, "--"+name+"="+arrayFlagNoValue)
		}
	}
	return out
}

// bigQueryFlags are --endpoint and --credentials: how a command reaches
// BigQuery.
type bigQueryFlags struct {
	endpoint, credentials *string
}

func addBigQueryFlags(fs *flag.FlagSet) bigQueryFlags {
	return bigQueryFlags{
		endpoint:    fs.String("endpoint", "", "BigQuery API endpoint, e.g. an emulator (default $DFD_BIGQUERY_ENDPOINT, else Google's)"),
		credentials: fs.String("credentials", "", "service-account key or .df-credentials.json (default: the project's .df-credentials.json, else Application Default Credentials)"),
	}
}

// warehouseFlags are --metadata and --offline with the BigQuery flags:
// where the warehouse tables' schemas come from. metadataUsage is
// --metadata's help.
type warehouseFlags struct {
	metadata *string
	offline  *bool
	bigQueryFlags
}

func addWarehouseFlags(fs *flag.FlagSet, metadataUsage string) warehouseFlags {
	return warehouseFlags{
		metadata:      fs.String("metadata", "", metadataUsage),
		offline:       fs.Bool("offline", false, "use no warehouse metadata but --metadata's: never connect to BigQuery"),
		bigQueryFlags: addBigQueryFlags(fs),
	}
}
