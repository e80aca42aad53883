package offline

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The snapshot file is itself the protojson form of a small message,
//
//	message Snapshot { repeated dataform.TableMetadata tables = 1; repeated Query queries = 2; repeated Dataset datasets = 3; }
//	message Query { string statement = 1; dataform.ExecuteResponse response = 2; }
//	message Dataset { string database = 1; string schema = 2; }
//
// described here at run time. Decoding the whole file in one protojson call
// (rather than encoding/json around per-table protojson calls) means
// protojson's errors carry the line and column in the file itself, and
// unknown top-level keys are rejected like any other unknown field.
var snapshotDesc, queryDesc = func() (protoreflect.MessageDescriptor, protoreflect.MessageDescriptor) {
	msg := func(name string, fields ...*descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: fields}
	}
	field := func(name string, num int32, label descriptorpb.FieldDescriptorProto_Label,
		typ descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{
			Name: proto.String(name), Number: proto.Int32(num), Label: label.Enum(), Type: typ.Enum(),
		}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	const (
		repeated = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		optional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		message  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		str      = descriptorpb.FieldDescriptorProto_TYPE_STRING
	)
	file := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("dfd/adapters/offline/snapshot.proto"),
		Package: proto.String("dfd.offline"),
		Syntax:  proto.String("proto3"),
		Dependency: []string{
			dataformpb.File_db_adapter_proto.Path(),
			dataformpb.File_jit_proto.Path(),
		},
		MessageType: []*descriptorpb.DescriptorProto{
			msg("Snapshot",
				field("tables", 1, repeated, message, ".dataform.TableMetadata"),
				field("queries", 2, repeated, message, ".dfd.offline.Query"),
				field("datasets", 3, repeated, message, ".dfd.offline.Dataset")),
			msg("Query",
				field("statement", 1, optional, str, ""),
				field("response", 2, optional, message, ".dataform.ExecuteResponse")),
			msg("Dataset",
				field("database", 1, optional, str, ""),
				field("schema", 2, optional, str, "")),
		},
	}
	fd, err := protodesc.NewFile(file, protoregistry.GlobalFiles)
	if err != nil {
		panic(fmt.Sprintf("offline: building the snapshot descriptor: %v", err))
	}
	return fd.Messages().ByName("Snapshot"), fd.Messages().ByName("Query")
}()

type snapshot struct {
	tables   []*dataformpb.TableMetadata
	queries  []query
	datasets []dataset // listed in full
}

type dataset struct{ database, schema string }

type query struct {
	statement string
	response  *dataformpb.ExecuteResponse
}

// decode parses the snapshot JSON into generated message types.
func decode(data []byte) (*snapshot, error) {
	m := dynamicpb.NewMessage(snapshotDesc)
	if err := protojson.Unmarshal(data, m); err != nil {
		return nil, err // protojson's message names the line and column
	}
	out := &snapshot{}
	tables := m.Get(snapshotDesc.Fields().ByName("tables")).List()
	for i := range tables.Len() {
		t := new(dataformpb.TableMetadata)
		if err := convert(tables.Get(i).Message(), t); err != nil {
			return nil, fmt.Errorf("tables[%d]: %w", i, err)
		}
		out.tables = append(out.tables, t)
	}
	queries := m.Get(snapshotDesc.Fields().ByName("queries")).List()
	stmtField, respField := queryDesc.Fields().ByName("statement"), queryDesc.Fields().ByName("response")
	for i := range queries.Len() {
		qm := queries.Get(i).Message()
		q := query{statement: qm.Get(stmtField).String()}
		if qm.Has(respField) {
			q.response = new(dataformpb.ExecuteResponse)
			if err := convert(qm.Get(respField).Message(), q.response); err != nil {
				return nil, fmt.Errorf("queries[%d].response: %w", i, err)
			}
		}
		out.queries = append(out.queries, q)
	}
	datasets := m.Get(snapshotDesc.Fields().ByName("datasets")).List()
	for i := range datasets.Len() {
		dm := datasets.Get(i).Message()
		fields := dm.Descriptor().Fields()
		d := dataset{dm.Get(fields.ByName("database")).String(), dm.Get(fields.ByName("schema")).String()}
		if d.schema == "" {
			return nil, fmt.Errorf("datasets[%d]: a dataset needs a schema", i)
		}
		out.datasets = append(out.datasets, d)
	}
	return out, nil
}

// convert turns a dynamic message into the generated type of the same
// descriptor (once per entry at load time, so the cost does not matter).
func convert(from protoreflect.Message, to proto.Message) error {
	b, err := proto.Marshal(from.Interface())
	if err != nil {
		return err
	}
	return proto.Unmarshal(b, to)
}
