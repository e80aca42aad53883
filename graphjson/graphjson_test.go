package graphjson

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// wireCase is one input message. want is the exact expected output (without
// the trailing newline Marshal adds); wantErr, if set, is a substring of the
// expected error. All non-error cases are also checked against protobufjs by
// TestOracle.
type wireCase struct {
	name    string
	typ     string
	wire    w
	want    string
	wantErr string
}

func cases(t testing.TB) []wireCase {
	tgt := func(schema, name string) w { return w{}.str(1, schema).str(2, name) }
	return []wireCase{
		{
			name: "empty",
			typ:  "dataform.CompiledGraph",
			want: `{}`,
		},
		{
			name: "explicit proto3 defaults are printed, in field-number order",
			typ:  "dataform.Table",
			wire: w{}.varint(37, 0).varint(36, 0).varint(9, 0).str(5, "").varint(6, 0),
			want: `{
    "query": "",
    "disabled": false,
    "protected": false,
    "enumType": "UNKNOWN_TYPE",
    "onSchemaChange": "IGNORE"
}`,
		},
		{
			name: "graph from proto.Marshal",
			typ:  "dataform.CompiledGraph",
			wire: mustMarshal(t, &dataformpb.CompiledGraph{
				ProjectConfig: &dataformpb.ProjectConfig{DefaultDatabase: "db", Vars: map[string]string{"b": "2", "a": "1"}},
				Tables: []*dataformpb.Table{{
					Target:      &dataformpb.Target{Database: "db", Schema: "s", Name: "t"},
					EnumType:    dataformpb.TableType_INCREMENTAL,
					Query:       "select 1",
					Tags:        []string{"x", "y"},
					UniqueKey:   []string{"id"},
					FileName:    "definitions/t.sqlx",
					Disabled:    true,
					Bigquery:    &dataformpb.BigQueryOptions{PartitionBy: "DATE(ts)", ClusterBy: []string{"a"}},
					JitCode:     "",
					Protected:   false,
					Hermeticity: dataformpb.ActionHermeticity_HERMETIC,
				}},
				DataformCoreVersion: "3.0.62",
			}),
			want: `{
    "tables": [
        {
            "target": {
                "schema": "s",
                "name": "t",
                "database": "db"
            },
            "query": "select 1",
            "disabled": true,
            "fileName": "definitions/t.sqlx",
            "bigquery": {
                "partitionBy": "DATE(ts)",
                "clusterBy": [
                    "a"
                ]
            },
            "tags": [
                "x",
                "y"
            ],
            "uniqueKey": [
                "id"
            ],
            "hermeticity": "HERMETIC",
            "enumType": "INCREMENTAL"
        }
    ],
    "projectConfig": {
        "defaultDatabase": "db",
        "vars": {
            "a": "1",
            "b": "2"
        }
    },
    "dataformCoreVersion": "3.0.62"
}`,
		},
		{
			name: "singular message seen twice is replaced, not merged",
			typ:  "dataform.Table",
			wire: w{}.msg(4, w{}.str(1, "first_schema").varint(4, 1)).msg(4, w{}.str(2, "second_name")),
			want: `{
    "target": {
        "name": "second_name"
    }
}`,
		},
		{
			name: "scalar seen twice: last wins, position by field number",
			typ:  "dataform.Target",
			wire: w{}.str(2, "a").str(1, "s").str(2, "b"),
			want: `{
    "schema": "s",
    "name": "b"
}`,
		},
		{
			name: "repeated fields interleaved keep wire order per field",
			typ:  "dataform.Table",
			wire: w{}.str(23, "t1").msg(27, tgt("s", "d1")).str(23, "t2").msg(27, tgt("s", "d2")),
			want: `{
    "tags": [
        "t1",
        "t2"
    ],
    "dependencyTargets": [
        {
            "schema": "s",
            "name": "d1"
        },
        {
            "schema": "s",
            "name": "d2"
        }
    ]
}`,
		},
		{
			name: "unknown fields of every wire type are skipped",
			typ:  "dataform.Target",
			wire: w{}.varint(1000, 5).str(1, "s").fixed32(1001, 1).fixed64(1002, 2).
				str(1003, "x").group(1004, w{}.varint(1, 1).group(2, w{})).str(2, "n"),
			want: `{
    "schema": "s",
    "name": "n"
}`,
		},
		{
			name: "map keys: array indices ascending first, then insertion order; repeated key keeps position",
			typ:  "graphjsontest.Maps",
			wire: w{}.
				msg(1, entry(w{}.str(1, "b"), w{}.str(2, "b1"))).
				msg(1, entry(w{}.str(1, "10"), w{}.str(2, "ten"))).
				msg(1, entry(w{}.str(1, "a"), w{}.str(2, "a1"))).
				msg(1, entry(w{}.str(1, "2"), w{}.str(2, "two"))).
				msg(1, entry(w{}.str(1, "01"), w{}.str(2, "leading zero"))).
				msg(1, entry(w{}.str(1, "-1"), w{}.str(2, "negative"))).
				msg(1, entry(w{}.str(1, "4294967295"), w{}.str(2, "2^32-1"))).
				msg(1, entry(w{}.str(1, "4294967294"), w{}.str(2, "2^32-2"))).
				msg(1, entry(w{}.str(1, "0"), w{}.str(2, "zero"))).
				msg(1, entry(w{}.str(1, "b"), w{}.str(2, "b2"))).
				msg(1, entry(w{}.str(1, "__proto__"), w{}.str(2, "proto"))),
			want: `{
    "ss": {
        "0": "zero",
        "2": "two",
        "10": "ten",
        "4294967294": "2^32-2",
        "b": "b2",
        "a": "a1",
        "01": "leading zero",
        "-1": "negative",
        "4294967295": "2^32-1",
        "__proto__": "proto"
    }
}`,
		},
		{
			name: "map entries with missing key/value use defaults; entry fields in any order",
			typ:  "graphjsontest.Maps",
			wire: w{}.
				msg(1, entry(nil, w{}.str(2, "no key"))).
				msg(1, entry(w{}.str(2, "v").str(1, "k"), nil)).
				msg(12, entry(w{}.str(1, "nocolor"), nil)).
				msg(7, entry(w{}.str(1, "nobytes"), nil)).
				msg(4, entry(w{}.varint(1, 7), nil)).
				msg(8, entry(w{}.str(1, "m"), w{}.msg(2, w{}.varint(3, 1)))),
			want: `{
    "ss": {
        "": "no key",
        "k": "v"
    },
    "u32": {
        "7": "0"
    },
    "sb": {
        "nobytes": ""
    },
    "sm": {
        "m": {
            "i32": 1
        }
    },
    "sc": {
        "nocolor": "COLOR_UNSPECIFIED"
    }
}`,
		},
		{
			name: "non-string map keys",
			typ:  "graphjsontest.Maps",
			wire: w{}.
				msg(2, entry(w{}.varint(1, 5), w{}.str(2, "five"))).
				msg(2, entry(w{}.varint(1, uint64(math.MaxUint64)), w{}.str(2, "minus one"))).
				msg(2, entry(w{}.varint(1, 1), w{}.str(2, "one"))).
				msg(5, entry(w{}.varint(1, 1), w{}.varint(2, 2))).
				msg(5, entry(w{}.varint(1, 0), w{}.varint(2, 1))).
				msg(10, entry(w{}.sint(1, -3), w{}.float(2, 0.5))).
				msg(13, entry(w{}.fixed32(1, math.MaxUint32), w{}.varint(2, math.MaxUint64))),
			want: `{
    "i32": {
        "1": "one",
        "5": "five",
        "-1": "minus one"
    },
    "b": {
        "true": "GREEN",
        "false": "RED"
    },
    "s32": {
        "-3": 0.5
    },
    "sf32": {
        "-1": "18446744073709551615"
    }
}`,
		},
		{
			name: "64-bit map keys become protobufjs long hashes",
			typ:  "graphjsontest.Maps",
			wire: w{}.
				msg(3, entry(w{}.varint(1, 0x41), w{}.str(2, "A"))).
				msg(3, entry(nil, w{}.str(2, "absent key"))).
				msg(3, entry(w{}.varint(1, 0x3030303030303031), w{}.str(2, "index-like hash"))),
			want: `{
    "i64": {
        "0": "absent key",
        "10000000": "index-like hash",
        "A\u0000\u0000\u0000\u0000\u0000\u0000\u0000": "A"
    }
}`,
		},
		{
			name: "scalar kinds",
			typ:  "graphjsontest.Scalars",
			wire: w{}.
				double(1, 0.1).float(2, 0.1).varint(3, uint64(math.MaxUint64)).varint(4, uint64(math.MaxUint64)).
				varint(5, math.MaxUint32).varint(6, math.MaxUint64).sint(7, -2).sint(8, math.MinInt64).
				fixed32(9, math.MaxUint32).fixed64(10, math.MaxUint64).fixed32(11, math.MaxUint32).
				fixed64(12, 1<<63).varint(13, 2).str(14, "s").bytes(15, []byte{0, 1, 2, 0xfb, 0xff}).
				varint(16, 1).varint(17, 0),
			want: `{
    "d": 0.1,
    "f": 0.10000000149011612,
    "i32": -1,
    "i64": "-1",
    "u32": 4294967295,
    "u64": "18446744073709551615",
    "s32": -2,
    "s64": "-9223372036854775808",
    "f32": 4294967295,
    "f64": "18446744073709551615",
    "sf32": -1,
    "sf64": "-9223372036854775808",
    "b": true,
    "s": "s",
    "by": "AAEC+/8=",
    "color": "RED",
    "opt": 0
}`,
		},
		{
			name: "int64 extremes",
			typ:  "graphjsontest.Scalars",
			wire: w{}.varint(4, math.MaxInt64).varint(6, 1<<63).sint(8, math.MaxInt64).varint(3, 1<<31).varint(5, 1<<32|7),
			want: `{
    "i32": -2147483648,
    "i64": "9223372036854775807",
    "u32": 7,
    "u64": "9223372036854775808",
    "s64": "9223372036854775807"
}`,
		},
		{
			name: "bool uses the low 32 bits of the varint",
			typ:  "graphjsontest.Lists",
			wire: w{}.varint(13, 1<<32).varint(13, 1<<32|1).varint(13, 0),
			want: `{
    "b": [
        false,
        true,
        false
    ]
}`,
		},
		{
			name: "enums: alias takes the first declared name, unknown values are numbers",
			typ:  "graphjsontest.Lists",
			wire: w{}.bytes(16, packedVarints(0, 1, 2, 99, uint64(math.MaxUint64), 1<<32|2)),
			want: `{
    "color": [
        "COLOR_UNSPECIFIED",
        "RED",
        "GREEN",
        99,
        "NEGATIVE",
        "GREEN"
    ]
}`,
		},
		{
			name: "doubles print as JS numbers",
			typ:  "graphjsontest.Lists",
			wire: w{}.double(1, 1e21).double(1, 1e20).double(1, 0.1).double(1, math.Copysign(0, -1)).
				double(1, math.NaN()).double(1, math.Inf(1)).double(1, math.Inf(-1)).double(1, 1.5e-7).
				double(1, 0.000001).double(1, 123).double(1, -123.456).double(1, 5e-324).
				double(1, math.MaxFloat64).double(1, 123456789012345680000).double(1, 1.7976931348623157e-300).
				double(1, 9007199254740993).double(1, 2.5e-6).double(1, 1e-7),
			want: `{
    "d": [
        1e+21,
        100000000000000000000,
        0.1,
        0,
        "NaN",
        "Infinity",
        "-Infinity",
        1.5e-7,
        0.000001,
        123,
        -123.456,
        5e-324,
        1.7976931348623157e+308,
        123456789012345680000,
        1.7976931348623157e-300,
        9007199254740992,
        0.0000025,
        1e-7
    ]
}`,
		},
		{
			name: "floats are widened to double first",
			typ:  "graphjsontest.Lists",
			wire: w{}.bytes(2, w{}.raw(
				0xcd, 0xcc, 0xcc, 0x3d, // 0.1f
				0x00, 0x00, 0xc0, 0x7f, // NaN
				0x00, 0x00, 0x80, 0xff, // -Inf
				0x00, 0x00, 0x80, 0x3f, // 1
			)).float(2, 3.4028235e38).float(2, 1e-45),
			want: `{
    "f": [
        0.10000000149011612,
        "NaN",
        "-Infinity",
        1,
        3.4028234663852886e+38,
        1.401298464324817e-45
    ]
}`,
		},
		{
			name: "packed and unpacked encodings of one repeated field are concatenated",
			typ:  "graphjsontest.Lists",
			wire: w{}.varint(3, 1).bytes(3, packedVarints(2, 3)).varint(3, 4).bytes(3, nil).
				bytes(9, w{}.raw(1, 0, 0, 0, 2, 0, 0, 0)).fixed32(9, 3).
				bytes(8, packedVarints(1, 2, 3)).sint(7, -5),
			want: `{
    "i32": [
        1,
        2,
        3,
        4
    ],
    "s32": [
        -5
    ],
    "s64": [
        "-1",
        "1",
        "-2"
    ],
    "f32": [
        1,
        2,
        3
    ]
}`,
		},
		{
			name: "empty packed payload prints nothing",
			typ:  "graphjsontest.Lists",
			wire: w{}.bytes(3, nil).bytes(4, nil).str(14, ""),
			want: `{
    "s": [
        ""
    ]
}`,
		},
		{
			name: "repeated bytes and messages",
			typ:  "graphjsontest.Lists",
			wire: w{}.bytes(15, nil).bytes(15, []byte("hi")).msg(17, nil).msg(17, w{}.varint(13, 0)),
			want: `{
    "by": [
        "",
        "aGk="
    ],
    "msgs": [
        {},
        {
            "b": false
        }
    ]
}`,
		},
		{
			name: "oneof members are ordinary fields; both members on the wire are both printed",
			typ:  "graphjsontest.Scalars",
			wire: w{}.msg(19, w{}.str(18, "inner")).str(18, "outer"),
			want: `{
    "oneStr": "outer",
    "oneMsg": {
        "oneStr": "inner"
    }
}`,
		},
		{
			name: "protobufjs property names",
			typ:  "graphjsontest.Names",
			wire: w{}.str(1, "1").str(2, "2").str(3, "3").str(4, "4").str(5, "5").str(6, "6").str(7, "7").str(8, "8"),
			want: `{
    "fooBar": "1",
    "foo_1bar": "2",
    "a_B": "3",
    "_lead": "4",
    "x_Y": "5",
    "withJson": "6",
    "trailing_": "7",
    "protected": "8"
}`,
		},
		{
			name: "declaration order is irrelevant, field numbers decide",
			typ:  "graphjsontest.Order",
			wire: w{}.str(30, "z").str(2, "a").msg(10, entry(w{}.str(1, "k"), w{}.str(2, "v"))).
				msg(1, nil).varint(20, 3).varint(5, 2),
			want: `{
    "s": {},
    "a": [
        "a"
    ],
    "c": "GREEN",
    "m": {
        "k": "v"
    },
    "n": 3,
    "z": "z"
}`,
		},
		{
			name: "Struct and Timestamp print raw, no well-known-type mapping",
			typ:  "graphjsontest.Wkt",
			wire: w{}.msg(1, mustMarshal(t, mustStruct(t, map[string]any{
				"k":    "v",
				"list": []any{1.0, "two", []any{true, nil}, map[string]any{}},
				"n":    1e21,
			}))).msg(2, mustMarshal(t, &timestamppb.Timestamp{Seconds: 1, Nanos: 2})).
				msg(3, w{}.varint(1, 0)).msg(4, nil),
			want: `{
    "st": {
        "fields": {
            "k": {
                "stringValue": "v"
            },
            "list": {
                "listValue": {
                    "values": [
                        {
                            "numberValue": 1
                        },
                        {
                            "stringValue": "two"
                        },
                        {
                            "listValue": {
                                "values": [
                                    {
                                        "boolValue": true
                                    },
                                    {
                                        "nullValue": "NULL_VALUE"
                                    }
                                ]
                            }
                        },
                        {
                            "structValue": {}
                        }
                    ]
                }
            },
            "n": {
                "numberValue": 1e+21
            }
        }
    },
    "ts": {
        "seconds": "1",
        "nanos": 2
    },
    "v": {
        "nullValue": "NULL_VALUE"
    },
    "lv": {}
}`,
		},
		{
			name: "jitData Struct in a CompiledGraph",
			typ:  "dataform.CompiledGraph",
			wire: mustMarshal(t, &dataformpb.CompiledGraph{JitData: mustStruct(t, map[string]any{"x": -0.0, "y": 0.1})}),
			want: `{
    "jitData": {
        "fields": {
            "x": {
                "numberValue": 0
            },
            "y": {
                "numberValue": 0.1
            }
        }
    }
}`,
		},
		{
			name: "string escaping like JSON.stringify",
			typ:  "dataform.Target",
			wire: w{}.str(2, "q\"b\\s/<>&\b\f\n\r\t\x00\x01\x1f\x7f\u2028\u2029é€😀"),
			want: `{
    "name": "q\"b\\s/<>&\b\f\n\r\t\u0000\u0001\u001f` + "\x7f\u2028\u2029é€😀" + `"
}`,
		},
		{
			name: "invalid UTF-8 decoded like protobufjs utf8.read",
			typ:  "graphjsontest.Lists",
			wire: w{}.
				str(14, "a\x80b").                   // stray continuation byte: dropped
				str(14, "\xc3").                     // truncated 2-byte: missing byte is 0 -> U+00C0
				str(14, "\xc2A").                    // bad continuation consumed: U+0081
				str(14, "\xc0\x80").                 // overlong: U+FFFD
				str(14, "\xed\xa0\x80x").            // encoded lone high surrogate
				str(14, "\xed\xb0\x80").             // encoded lone low surrogate
				str(14, "\xed\xa0\xbd\xed\xb8\x80"). // encoded surrogate pair: a valid emoji
				str(14, "\xf4\x90\x80\x80").         // above U+10FFFF: U+FFFD
				str(14, "\xf8\x90\x80\x80").         // 0xF8 uses its low 3 bits: U+10000
				str(14, "\xe2\x82").                 // truncated 3-byte: U+2080
				str(14, "\xff"),                     // U+FFFD (value 0x1C0000 > U+10FFFF)
			want: `{
    "s": [
        "ab",
        "` + "\u00c0" + `",
        "` + "\u0081" + `",
        "` + "\ufffd" + `",
        "\ud800x",
        "\udc00",
        "😀",
        "` + "\ufffd" + `",
        "` + "\U00010000" + `",
        "` + "\u2080" + `",
        "` + "\ufffd" + `"
    ]
}`,
		},
		{
			name: "proto2 groups and defaults",
			typ:  "graphjsontest.P2",
			wire: w{}.group(4, w{}.str(5, "g")).group(6, w{}.varint(7, 1)).group(6, nil).
				varint(2, 1).bytes(2, packedVarints(2)).varint(3, 3).str(8, "hello"),
			want: `{
    "unpacked": [
        1,
        2
    ],
    "packed": [
        3
    ],
    "grp": {
        "s": "g"
    },
    "item": [
        {
            "x": 1
        },
        {}
    ],
    "def": "hello"
}`,
		},
		{
			name: "nesting at the depth limit",
			typ:  "graphjsontest.Deep",
			wire: deep(MaxDepth),
			want: deepWant(MaxDepth),
		},

		// Errors.
		{name: "truncated tag", typ: "dataform.Target", wire: w{0x80}, wantErr: "dataform.Target: invalid field tag"},
		{name: "field number 0", typ: "dataform.Target", wire: w{0x00, 0x00}, wantErr: "dataform.Target: invalid field tag"},
		{name: "truncated length", typ: "dataform.Target", wire: w{0x12, 0x05, 'a'}, wantErr: "dataform.Target: field name (2): unexpected EOF"},
		{name: "truncated unknown", typ: "dataform.Target", wire: w{}.raw(0xc0, 0x3e), wantErr: "dataform.Target: unknown field 1000: unexpected EOF"},
		{name: "end group without start", typ: "dataform.Target", wire: w{0x0c}, wantErr: "dataform.Target: field schema (1): proto: mismatching end group marker"},
		{name: "unterminated group", typ: "dataform.Target", wire: w{}.raw(0xc3, 0x3e).varint(1, 1), wantErr: "dataform.Target: unknown field 1000"},
		{name: "wrong wire type", typ: "dataform.Target", wire: w{}.varint(2, 1), wantErr: "dataform.Target: field name (2): wire type 0, want 2"},
		{
			name:    "error path names nested field",
			typ:     "dataform.CompiledGraph",
			wire:    w{}.msg(1, w{}.str(5, "ok")).msg(1, w{}.msg(4, w{}.raw(0x1a, 0x09))),
			wantErr: "dataform.CompiledGraph.tables[1].target: field database (3): unexpected EOF",
		},
		{
			name:    "error in replaced message",
			typ:     "dataform.Table",
			wire:    w{}.msg(4, w{}.raw(0x08)).msg(4, nil),
			wantErr: "dataform.Table.target: field schema (1): unexpected EOF",
		},
		{
			name:    "error in map value",
			typ:     "graphjsontest.Maps",
			wire:    w{}.msg(8, entry(w{}.str(1, "k"), w{}.msg(2, w{}.raw(0x0a, 0x00)))),
			wantErr: `graphjsontest.Maps.sm["k"]: field d (1): wire type 2, want 1`,
		},
		{
			name:    "truncated packed element",
			typ:     "graphjsontest.Lists",
			wire:    w{}.bytes(3, []byte{0x01, 0x80}),
			wantErr: "graphjsontest.Lists.i32[1]: packed element: unexpected EOF",
		},
		{
			name:    "too deep",
			typ:     "graphjsontest.Deep",
			wire:    deep(MaxDepth + 1),
			wantErr: "maximum nesting depth exceeded",
		},
	}
}

// deep returns a Deep message nested n levels below the top one.
func deep(n int) w {
	m := w{}.varint(2, uint64(n))
	for i := n - 1; i >= 0; i-- {
		m = w{}.msg(1, m).varint(2, uint64(i))
	}
	return m
}

func deepWant(n int) string {
	var sb strings.Builder
	var rec func(i int)
	rec = func(i int) {
		ind := strings.Repeat("    ", i)
		sb.WriteString("{\n")
		if i < n {
			sb.WriteString(ind + `    "next": `)
			rec(i + 1)
			sb.WriteString(",\n")
		}
		sb.WriteString(ind + `    "v": `)
		sb.WriteString(strconv.Itoa(i))
		sb.WriteString("\n" + ind + "}")
	}
	rec(0)
	return sb.String()
}

func mustStruct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMarshal(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			got, err := Marshal(desc(t, c.typ), c.wire)
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("no error, want %q; output:\n%s", c.wantErr, got)
				}
				// protobuf-go randomly writes "proto:" followed by a
				// non-breaking space, to keep callers from matching its
				// texts; compare with ordinary spaces.
				if !strings.Contains(strings.ReplaceAll(err.Error(), "\u00a0", " "), c.wantErr) {
					t.Fatalf("error %q, want it to contain %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := c.want + "\n"; string(got) != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestMarshalName(t *testing.T) {
	got, err := MarshalName("dataform.Target", w{}.str(2, "n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n    \"name\": \"n\"\n}\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := MarshalName("dataform.NoSuchMessage", nil); err == nil {
		t.Error("no error for unknown message")
	}
	if _, err := MarshalName("dataform.TableType", nil); err == nil {
		t.Error("no error for an enum name")
	}
}

func TestAppendIndent(t *testing.T) {
	md := desc(t, "dataform.Target")
	dst := []byte(`{"x": `)
	got, err := AppendIndent(dst, md, w{}.str(1, "s").str(2, "n"), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"x\": {\n        \"schema\": \"s\",\n        \"name\": \"n\"\n    }"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// On error dst is returned unchanged.
	got, err = AppendIndent(dst, md, w{0x80}, 0)
	if err == nil || string(got) != `{"x": ` {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestPbjsFieldName(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"a":               "a",
		"foo":             "foo",
		"foo_bar":         "fooBar",
		"foo_bar_baz":     "fooBarBaz",
		"a_b_c":           "aBC",
		"foo_1bar":        "foo_1bar",
		"a__b":            "a_B",
		"_lead":           "_lead",
		"__x":             "_X",
		"x_Y":             "x_Y",
		"trailing_":       "trailing_",
		"bigquery_labels": "bigqueryLabels",
		"fooBar":          "fooBar",
	} {
		if got := pbjsFieldName(in); got != want {
			t.Errorf("pbjsFieldName(%q) = %q, want %q", in, got, want)
		}
	}
}

// For every field of the Dataform protos the protobufjs name equals protoc's
// JSON name, so the two conventions can never disagree on real graphs.
func TestDataformNamesMatchJSONNames(t *testing.T) {
	n := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("dataform", func(fd protoreflect.FileDescriptor) bool {
		var walk func(protoreflect.MessageDescriptors)
		walk = func(mds protoreflect.MessageDescriptors) {
			for i := range mds.Len() {
				md := mds.Get(i)
				for j := range md.Fields().Len() {
					f := md.Fields().Get(j)
					n++
					if got := pbjsFieldName(string(f.Name())); got != f.JSONName() {
						t.Errorf("%s: pbjs name %q, JSON name %q", f.FullName(), got, f.JSONName())
					}
				}
				walk(md.Messages())
			}
		}
		walk(fd.Messages())
		return true
	})
	if n < 100 {
		t.Fatalf("only %d dataform fields found; is dataformpb registered?", n)
	}
}

func TestJSNumber(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1, "-1"}, {0.1, "0.1"}, {1.5, "1.5"},
		{123, "123"}, {1e21, "1e+21"}, {1e20, "100000000000000000000"}, {1.5e-7, "1.5e-7"},
		{1e-6, "0.000001"}, {1.2e-6, "0.0000012"}, {1e-7, "1e-7"}, {123e-20, "1.23e-18"},
		{1.7976931348623157e308, "1.7976931348623157e+308"}, {5e-324, "5e-324"},
		{2e21, "2e+21"}, {1.25e21, "1.25e+21"}, {999999999999999900000, "999999999999999900000"},
		{0.000123, "0.000123"}, {100, "100"}, {1.0000000000000002, "1.0000000000000002"},
	} {
		if got := string(appendJSNumber(nil, c.f)); got != c.want {
			t.Errorf("appendJSNumber(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func TestMalformedNeverPanics(t *testing.T) {
	// Every truncation and single-byte corruption of a rich message either
	// renders or fails with an error, never panics.
	var inputs []wireCase
	for _, c := range cases(t) {
		if c.wantErr == "" && len(c.wire) > 0 && len(c.wire) < 4000 {
			inputs = append(inputs, c)
		}
	}
	for _, c := range inputs {
		md := desc(t, c.typ)
		for i := range len(c.wire) {
			_, _ = Marshal(md, c.wire[:i])
			for _, x := range []byte{0x00, 0x80, 0xff, 0x0f} {
				b := bytes.Clone(c.wire)
				b[i] ^= x
				_, _ = Marshal(md, b)
			}
		}
	}
}

func FuzzMarshal(f *testing.F) {
	for _, c := range cases(f) {
		f.Add(c.typ, []byte(c.wire))
	}
	f.Fuzz(func(t *testing.T, typ string, b []byte) {
		files, err := exoticFiles()
		if err != nil {
			t.Fatal(err)
		}
		var d protoreflect.Descriptor
		if d, err = files.FindDescriptorByName(protoreflect.FullName(typ)); err != nil {
			if d, err = protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(typ)); err != nil {
				return
			}
		}
		md, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			return
		}
		_, _ = Marshal(md, b)
	})
}

// TestExoticProtosetFresh checks testdata/exotic.protoset against the .proto
// sources when protoc is available.
func TestExoticProtosetFresh(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("protoc not installed")
	}
	out := filepath.Join(t.TempDir(), "set")
	cmd := exec.Command("protoc", "-I", "testdata", "--include_imports", "--descriptor_set_out="+out, "exotic.proto", "exotic2.proto")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	var fresh, committed descriptorpb.FileDescriptorSet
	for p, m := range map[string]*descriptorpb.FileDescriptorSet{out: &fresh, "testdata/exotic.protoset": &committed} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
	}
	if !proto.Equal(&fresh, &committed) {
		t.Error("testdata/exotic.protoset is stale; run go generate ./graphjson")
	}
}
