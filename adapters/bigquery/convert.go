package bigquery

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	bq "google.golang.org/api/bigquery/v2"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// tableMetadata converts tables.get's answer as the Dataform CLI does:
// TABLE and VIEW keep their type and every other kind (materialized view,
// external table, snapshot) is UNKNOWN; lastModifiedTime is passed through
// as milliseconds; the streaming buffer becomes a flag.
func tableMetadata(target *dataformpb.Target, t *bq.Table) *dataformpb.TableMetadata {
	m := &dataformpb.TableMetadata{
		Target:            target,
		Description:       t.Description,
		Labels:            t.Labels,
		LastUpdatedMillis: int64(t.LastModifiedTime),
		Bigquery:          &dataformpb.TableMetadata_BigQuery{HasStreamingBuffer: t.StreamingBuffer != nil},
	}
	switch t.Type {
	case "TABLE":
		m.Type = dataformpb.TableMetadata_TABLE
	case "VIEW":
		m.Type = dataformpb.TableMetadata_VIEW
	}
	if t.Schema != nil {
		m.Fields = fields(t.Schema.Fields)
	}
	return m
}

func fields(in []*bq.TableFieldSchema) []*dataformpb.Field {
	if len(in) == 0 {
		return nil
	}
	out := make([]*dataformpb.Field, 0, len(in))
	for _, f := range in {
		out = append(out, field(f))
	}
	return out
}

func field(f *bq.TableFieldSchema) *dataformpb.Field {
	out := &dataformpb.Field{Name: f.Name, Description: f.Description}
	if f.Mode == "REPEATED" {
		out.Flags = []dataformpb.Field_Flag{dataformpb.Field_REPEATED}
	}
	switch strings.ToUpper(f.Type) {
	case "RECORD", "STRUCT":
		out.Type = &dataformpb.Field_Struct{Struct: &dataformpb.Fields{Fields: fields(f.Fields)}}
	default:
		out.Type = &dataformpb.Field_Primitive_{Primitive: primitive(f.Type)}
	}
	return out
}

// primitive maps a BigQuery column type to Dataform's primitive exactly as
// the Dataform CLI does, including where its switch statement folds types
// together: BIGNUMERIC is reported as NUMERIC, JSON and INTERVAL as STRING.
// JiT code written against the CLI may compare these values.
func primitive(typ string) dataformpb.Field_Primitive {
	switch strings.ToUpper(typ) {
	case "FLOAT", "FLOAT64":
		return dataformpb.Field_FLOAT
	case "INTEGER", "INT64":
		return dataformpb.Field_INTEGER
	case "NUMERIC", "BIGNUMERIC":
		return dataformpb.Field_NUMERIC
	case "BOOL", "BOOLEAN":
		return dataformpb.Field_BOOLEAN
	case "STRING", "JSON", "INTERVAL":
		return dataformpb.Field_STRING
	case "DATE":
		return dataformpb.Field_DATE
	case "DATETIME":
		return dataformpb.Field_DATETIME
	case "TIMESTAMP":
		return dataformpb.Field_TIMESTAMP
	case "TIME":
		return dataformpb.Field_TIME
	case "BYTES":
		return dataformpb.Field_BYTES
	case "GEOGRAPHY":
		return dataformpb.Field_GEOGRAPHY
	}
	return dataformpb.Field_UNKNOWN
}

// rowStruct turns one row of getQueryResults into the google.protobuf.Struct
// the JiT code receives: BigQuery's own {"f": [{"v": …}]} form, values as
// BigQuery encodes them (strings, nested {"f": …} for records, [{"v": …}]
// for arrays, null).
func rowStruct(row *bq.TableRow) (*structpb.Struct, error) {
	cells := make([]any, len(row.F))
	for i, c := range row.F {
		cells[i] = map[string]any{"v": c.V}
	}
	return structpb.NewStruct(map[string]any{"f": cells})
}

// queryParams converts the request's params (a google.protobuf.Struct of
// name → value) into BigQuery named parameters. Types are inferred from the
// values as the Node.js client the Dataform CLI uses does: strings are
// STRING, booleans BOOL, whole numbers INT64 and other numbers FLOAT64,
// lists ARRAY of their first element's type (all elements must agree),
// objects STRUCT. Null and empty lists carry no type and are rejected.
func queryParams(params *structpb.Struct) ([]*bq.QueryParameter, error) {
	if len(params.GetFields()) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(params.GetFields()))
	for name := range params.GetFields() {
		names = append(names, name)
	}
	sort.Strings(names) // a stable request: easier to read in logs and to cache
	out := make([]*bq.QueryParameter, 0, len(names))
	for _, name := range names {
		typ, val, err := paramValue(params.GetFields()[name])
		if err != nil {
			return nil, adapters.Errorf(adapters.InvalidArgument, "query parameter @%s: %v", name, err)
		}
		out = append(out, &bq.QueryParameter{Name: name, ParameterType: typ, ParameterValue: val})
	}
	return out, nil
}

func paramValue(v *structpb.Value) (*bq.QueryParameterType, *bq.QueryParameterValue, error) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		return &bq.QueryParameterType{Type: "STRING"}, scalar(k.StringValue), nil
	case *structpb.Value_BoolValue:
		return &bq.QueryParameterType{Type: "BOOL"}, scalar(strconv.FormatBool(k.BoolValue)), nil
	case *structpb.Value_NumberValue:
		n := k.NumberValue
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return &bq.QueryParameterType{Type: "FLOAT64"}, scalar(strconv.FormatFloat(n, 'g', -1, 64)), nil
		}
		if n == math.Trunc(n) && math.Abs(n) <= 1<<53 {
			return &bq.QueryParameterType{Type: "INT64"}, scalar(strconv.FormatInt(int64(n), 10)), nil
		}
		return &bq.QueryParameterType{Type: "FLOAT64"}, scalar(strconv.FormatFloat(n, 'g', -1, 64)), nil
	case *structpb.Value_ListValue:
		items := k.ListValue.GetValues()
		if len(items) == 0 {
			return nil, nil, fmt.Errorf("an empty array has no element type")
		}
		var elemType *bq.QueryParameterType
		vals := make([]*bq.QueryParameterValue, 0, len(items))
		for i, item := range items {
			t, val, err := paramValue(item)
			if err != nil {
				return nil, nil, fmt.Errorf("element %d: %w", i, err)
			}
			if t.Type == "ARRAY" {
				return nil, nil, fmt.Errorf("element %d: BigQuery has no arrays of arrays", i)
			}
			if elemType == nil {
				elemType = t
			} else if !sameType(elemType, t) {
				// [1, 2.5] is a FLOAT64 array, as in JavaScript.
				if isNumber(elemType) && isNumber(t) {
					elemType = &bq.QueryParameterType{Type: "FLOAT64"}
				} else {
					return nil, nil, fmt.Errorf("element %d is %s, element 0 is %s", i, t.Type, elemType.Type)
				}
			}
			vals = append(vals, val)
		}
		return &bq.QueryParameterType{Type: "ARRAY", ArrayType: elemType}, &bq.QueryParameterValue{ArrayValues: vals}, nil
	case *structpb.Value_StructValue:
		fields := k.StructValue.GetFields()
		if len(fields) == 0 {
			return nil, nil, fmt.Errorf("an empty object has no fields")
		}
		names := make([]string, 0, len(fields))
		for name := range fields {
			names = append(names, name)
		}
		sort.Strings(names)
		t := &bq.QueryParameterType{Type: "STRUCT"}
		val := &bq.QueryParameterValue{StructValues: map[string]bq.QueryParameterValue{}}
		for _, name := range names {
			ft, fv, err := paramValue(fields[name])
			if err != nil {
				return nil, nil, fmt.Errorf("field %s: %w", name, err)
			}
			t.StructTypes = append(t.StructTypes, &bq.QueryParameterTypeStructTypes{Name: name, Type: ft})
			val.StructValues[name] = *fv
		}
		return t, val, nil
	}
	return nil, nil, fmt.Errorf("null has no type; pass a typed value")
}

func scalar(s string) *bq.QueryParameterValue {
	// ForceSendFields: an empty string is a value, not an absent one.
	return &bq.QueryParameterValue{Value: s, ForceSendFields: []string{"Value"}}
}

func sameType(a, b *bq.QueryParameterType) bool {
	return a.Type == b.Type && a.Type != "STRUCT" || a.Type == "STRUCT" && b.Type == "STRUCT" && structTypesEqual(a, b)
}

func structTypesEqual(a, b *bq.QueryParameterType) bool {
	if len(a.StructTypes) != len(b.StructTypes) {
		return false
	}
	for i := range a.StructTypes {
		if a.StructTypes[i].Name != b.StructTypes[i].Name || !sameType(a.StructTypes[i].Type, b.StructTypes[i].Type) {
			return false
		}
	}
	return true
}

func isNumber(t *bq.QueryParameterType) bool { return t.Type == "INT64" || t.Type == "FLOAT64" }
