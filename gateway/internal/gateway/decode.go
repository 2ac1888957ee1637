package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// bodyMarshaler is the JSON marshaler of every route. It decodes request
// bodies as runtime.JSONPb does; when that fails on a body that is valid
// JSON, it names the first field (in key order) whose JSON type does not
// match the request message ("repos: expected an array"), because protojson
// reports a wrong type only as a syntax error at an offset.
type bodyMarshaler struct {
	*runtime.JSONPb
}

// gatewayJSON is the JSON of every route: proto field names, unpopulated
// fields emitted, unknown request fields refused.
func gatewayJSON() bodyMarshaler {
	return bodyMarshaler{&runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}}
}

// NewDecoder reads the whole body (the body limit middleware bounds it),
// which must be one JSON value.
func (m bodyMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		raw, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			return io.EOF
		}
		err = m.JSONPb.NewDecoder(bytes.NewReader(raw)).Decode(v)
		if err == nil {
			if !json.Valid(raw) {
				// The decoder stops after one value: a second one, or
				// anything after the first, is refused rather than
				// ignored, so that no reader of the same body sees
				// another request in it.
				return errors.New("invalid character after top-level value")
			}
			return nil
		}
		msg, ok := v.(proto.Message)
		if !ok || !json.Valid(raw) {
			return err
		}
		if typeErr := jsonTypeError(msg.ProtoReflect().Descriptor(), raw); typeErr != "" {
			return errors.New(typeErr)
		}
		return err
	})
}

// jsonTypeError returns "<field path>: expected <type>" for the first value
// in raw whose JSON type cannot decode into its field of md, or "" when the
// types all fit (the decoding error is then about something else).
func jsonTypeError(md protoreflect.MessageDescriptor, raw []byte) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return ""
	}
	if _, ok := v.(map[string]any); !ok {
		return "Request body: expected a JSON object"
	}
	return checkMessage(md, v, "")
}

func checkMessage(md protoreflect.MessageDescriptor, v any, path string) string {
	if wkt := wellKnown(md); wkt != "" {
		return checkWellKnown(md, wkt, v, path)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return typeMsg(path, "an object")
	}
	for _, k := range sortedKeys(obj) {
		fd := md.Fields().ByJSONName(k)
		if fd == nil {
			fd = md.Fields().ByTextName(k)
		}
		if fd == nil || obj[k] == nil {
			continue // unknown fields and nulls are the decoder's to report
		}
		if msg := checkField(fd, obj[k], join(path, k)); msg != "" {
			return msg
		}
	}
	return ""
}

// sortedKeys lists an object's keys in order, so that the first bad field
// reported is the same on every request.
func sortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func checkField(fd protoreflect.FieldDescriptor, v any, path string) string {
	switch {
	case fd.IsList():
		arr, ok := v.([]any)
		if !ok {
			return typeMsg(path, "an array")
		}
		for i, e := range arr {
			if msg := checkSingular(fd, e, fmt.Sprintf("%s[%d]", path, i)); msg != "" {
				return msg
			}
		}
		return ""
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			return typeMsg(path, "an object")
		}
		for _, k := range sortedKeys(obj) {
			if msg := checkSingular(fd.MapValue(), obj[k], join(path, k)); msg != "" {
				return msg
			}
		}
		return ""
	}
	return checkSingular(fd, v, path)
}

func checkSingular(fd protoreflect.FieldDescriptor, v any, path string) string {
	if v == nil {
		return ""
	}
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		if _, ok := v.(string); !ok {
			return typeMsg(path, "a string")
		}
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			return typeMsg(path, "a boolean")
		}
	case protoreflect.EnumKind:
		switch v.(type) {
		case string, json.Number:
		default:
			return typeMsg(path, "a string")
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if !isNumber(v, false) {
			return typeMsg(path, "a number")
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return checkMessage(fd.Message(), v, path)
	default: // the integer kinds
		if !isNumber(v, true) {
			return typeMsg(path, "an integer")
		}
	}
	return ""
}

// isNumber reports whether v is a JSON number (or a numeric string, which
// protojson also accepts), and a whole one when integer is set.
func isNumber(v any, integer bool) bool {
	var s string
	switch n := v.(type) {
	case json.Number:
		s = string(n)
	case string:
		s = n
	default:
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	return !integer || f == math.Trunc(f)
}

// wellKnown names the JSON shape of the google.protobuf types that have a
// special JSON form.
func wellKnown(md protoreflect.MessageDescriptor) string {
	if md.ParentFile() == nil || md.ParentFile().Package() != "google.protobuf" {
		return ""
	}
	switch md.Name() {
	case "Timestamp", "Duration", "FieldMask":
		return "string"
	case "Struct":
		return "object"
	case "ListValue":
		return "array"
	case "Value", "Any", "Empty":
		return "any"
	case "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value",
		"BoolValue", "StringValue", "BytesValue":
		return "wrapper"
	}
	return ""
}

func checkWellKnown(md protoreflect.MessageDescriptor, kind string, v any, path string) string {
	switch kind {
	case "string":
		if _, ok := v.(string); !ok {
			return typeMsg(path, "a string")
		}
	case "object":
		if _, ok := v.(map[string]any); !ok {
			return typeMsg(path, "an object")
		}
	case "array":
		if _, ok := v.([]any); !ok {
			return typeMsg(path, "an array")
		}
	case "wrapper":
		return checkSingular(md.Fields().ByName("value"), v, path)
	}
	return ""
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func typeMsg(path, want string) string {
	return path + ": expected " + want
}
