package cache

import (
	"maps"
	"slices"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// cloneTable deep-copies table metadata about ten times faster than
// proto.Clone, which matters because every cache hit hands out a copy (a
// ListTables hit copies every table of a dataset). TestCloneTableComplete
// fails when db_adapter.proto gains a field this function does not copy.
func cloneTable(m *dataformpb.TableMetadata) *dataformpb.TableMetadata {
	if m == nil {
		return nil
	}
	out := &dataformpb.TableMetadata{
		Type:              m.Type,
		Fields:            cloneFields(m.Fields),
		Description:       m.Description,
		Labels:            maps.Clone(m.Labels),
		LastUpdatedMillis: m.LastUpdatedMillis,
	}
	if t := m.Target; t != nil {
		out.Target = &dataformpb.Target{Database: t.Database, Schema: t.Schema, Name: t.Name, IncludeDependentAssertions: t.IncludeDependentAssertions}
	}
	if b := m.Bigquery; b != nil {
		out.Bigquery = &dataformpb.TableMetadata_BigQuery{HasStreamingBuffer: b.HasStreamingBuffer}
	}
	return out
}

func cloneFields(fs []*dataformpb.Field) []*dataformpb.Field {
	if fs == nil {
		return nil
	}
	out := make([]*dataformpb.Field, len(fs))
	for i, f := range fs {
		out[i] = cloneField(f)
	}
	return out
}

func cloneField(f *dataformpb.Field) *dataformpb.Field {
	if f == nil {
		return nil
	}
	out := &dataformpb.Field{Name: f.Name, Flags: slices.Clone(f.Flags), Description: f.Description}
	switch t := f.Type.(type) {
	case *dataformpb.Field_Primitive_:
		out.Type = &dataformpb.Field_Primitive_{Primitive: t.Primitive}
	case *dataformpb.Field_Struct:
		var s *dataformpb.Fields
		if t.Struct != nil {
			s = &dataformpb.Fields{Fields: cloneFields(t.Struct.Fields)}
		}
		out.Type = &dataformpb.Field_Struct{Struct: s}
	}
	return out
}
