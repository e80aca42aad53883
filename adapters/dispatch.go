package adapters

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// The DbAdapter method names as @dataform/core's protobufjs service passes
// them to its RPC implementation.
const (
	MethodExecute     = "Execute"
	MethodListTables  = "ListTables"
	MethodGetTable    = "GetTable"
	MethodDeleteTable = "DeleteTable"
)

// Dispatch answers one DbAdapter RPC from JiT code: it decodes req as the
// request message of method, calls a, and returns the encoded response.
//
// The reply is never nil on success: protobufjs leaves the JiT code's promise
// pending forever when an RPC answers with null bytes, so even DeleteTable
// (google.protobuf.Empty) gets an empty, non-nil slice.
//
// A non-nil error is always an *Error, ready to be sent as the rejection
// message: an unknown method is UNIMPLEMENTED, undecodable bytes or a
// request missing a required field are INVALID_ARGUMENT, a panic in the
// adapter is INTERNAL (the daemon keeps running), and other adapter errors
// are classified by AsError.
func Dispatch(ctx context.Context, a DbAdapter, method string, req []byte) (resp []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, &Error{Code: Internal, Message: fmt.Sprintf("adapter panicked in %s: %v", method, p)}
		}
		if err != nil {
			resp, err = nil, AsError(err)
		} else if resp == nil {
			resp = []byte{}
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	switch method {
	case MethodExecute:
		in := new(dataformpb.ExecuteRequest)
		if err := decode(method, req, in); err != nil {
			return nil, err
		}
		if strings.TrimSpace(in.GetStatement()) == "" {
			return nil, Errorf(InvalidArgument, "ExecuteRequest.statement must not be empty")
		}
		out, err := a.Execute(ctx, in)
		if err != nil {
			return nil, err
		}
		return encode(method, out)

	case MethodListTables:
		in := new(dataformpb.ListTablesRequest)
		if err := decode(method, req, in); err != nil {
			return nil, err
		}
		out, err := a.ListTables(ctx, in)
		if err != nil {
			return nil, err
		}
		return encode(method, out)

	case MethodGetTable:
		in := new(dataformpb.GetTableRequest)
		if err := decode(method, req, in); err != nil {
			return nil, err
		}
		if err := checkTarget("GetTableRequest", in.GetTarget()); err != nil {
			return nil, err
		}
		out, err := a.GetTable(ctx, in)
		if err != nil {
			return nil, err
		}
		if out == nil {
			// Core's contract: a missing table rejects; an empty
			// TableMetadata would look like a table without columns.
			return nil, Errorf(NotFound, "table %s not found", TargetString(in.GetTarget()))
		}
		return encode(method, out)

	case MethodDeleteTable:
		in := new(dataformpb.DeleteTableRequest)
		if err := decode(method, req, in); err != nil {
			return nil, err
		}
		if err := checkTarget("DeleteTableRequest", in.GetTarget()); err != nil {
			return nil, err
		}
		if err := a.DeleteTable(ctx, in); err != nil {
			return nil, err
		}
		return []byte{}, nil // google.protobuf.Empty
	}
	return nil, Errorf(Unimplemented, "unknown DbAdapter method %q", method)
}

func decode(method string, b []byte, m proto.Message) error {
	if err := proto.Unmarshal(b, m); err != nil {
		return Errorf(InvalidArgument, "cannot decode %s request: %w", method, err)
	}
	return nil
}

func encode(method string, m proto.Message) ([]byte, error) {
	// A nil message (an adapter returning nil, nil) encodes as the empty
	// message: a valid, empty reply.
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, Errorf(Internal, "cannot encode %s response: %w", method, err)
	}
	return b, nil
}

func checkTarget(msg string, t *dataformpb.Target) error {
	if t == nil {
		return Errorf(InvalidArgument, "%s.target must be supplied", msg)
	}
	if t.GetSchema() == "" || t.GetName() == "" {
		return Errorf(InvalidArgument, "%s.target needs a schema and a name, got %s", msg, TargetString(t))
	}
	return nil
}
