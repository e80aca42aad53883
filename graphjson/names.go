package graphjson

import "strings"

// pbjsFieldName returns the property name protobufjs gives a proto field:
// util.camelCase from protobufjs 7, i.e. the first character is kept and
// every "_x" after it with x in [a-z] becomes "X" (regexp /_([a-z])/g).
//
// This is what the CLI prints. It equals protoc's json_name
// (FieldDescriptor.JSONName) for ordinary snake_case names, including every
// field of the Dataform protos (checked by a test), but differs for unusual
// names, e.g. "foo_1bar" (pbjs keeps it, protoc says "foo1bar"), "a__b"
// ("a_B" vs "aB"), "_x" ("_x" vs "X"), "a_B" ("a_B" vs "aB"); protobufjs
// also ignores an explicit json_name option.
func pbjsFieldName(name string) string {
	if len(name) < 2 || !strings.Contains(name[1:], "_") {
		return name
	}
	var sb strings.Builder
	sb.Grow(len(name))
	sb.WriteByte(name[0])
	for i := 1; i < len(name); i++ {
		c := name[i]
		if c == '_' && i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z' {
			sb.WriteByte(name[i+1] - 'a' + 'A')
			i++
			continue
		}
		sb.WriteByte(c)
	}
	return sb.String()
}
