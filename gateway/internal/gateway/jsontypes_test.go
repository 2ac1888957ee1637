package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	authv1 "github.com/vulnscan/vulnscan/proto/gen/vulnscan/auth/v1"
)

func desc(m proto.Message) protoreflect.MessageDescriptor { return m.ProtoReflect().Descriptor() }

// The JSON type check covers every field kind and the well-known types'
// JSON forms: a value of the wrong JSON type is named with what was
// expected; a value protojson accepts passes.
func TestJSONTypeCheckByKind(t *testing.T) {
	t.Parallel()
	field := (&descriptorpb.FieldDescriptorProto{}).ProtoReflect().Descriptor()
	option := desc(&descriptorpb.UninterpretedOption{})
	for _, tc := range []struct {
		name string
		md   protoreflect.MessageDescriptor
		body string
		want string // "" means the types fit
	}{
		{"timestamp as a string", desc(&authv1.VerifyAPIKeyResponse{}), `{"expires_at":"2026-01-01T00:00:00Z"}`, ""},
		{"timestamp as a number", desc(&authv1.VerifyAPIKeyResponse{}), `{"expires_at":1700000000}`, "expires_at: expected a string"},
		{"camelCase names are checked too", desc(&authv1.VerifyAPIKeyResponse{}), `{"expiresAt":{}}`, "expiresAt: expected a string"},
		{"null is left to the decoder", desc(&authv1.VerifyAPIKeyResponse{}), `{"expires_at":null}`, ""},
		{"enum by name", field, `{"label":"LABEL_REPEATED"}`, ""},
		{"enum by number", field, `{"label":3}`, ""},
		{"enum as a boolean", field, `{"label":true}`, "label: expected a string"},
		{"int32 as a numeric string", field, `{"number":"7"}`, ""},
		{"int32 with a fraction", field, `{"number":1.5}`, "number: expected an integer"},
		{"int32 as a word", field, `{"number":"seven"}`, "number: expected an integer"},
		{"bool as a string", desc(&descriptorpb.FieldOptions{}), `{"packed":"yes"}`, "packed: expected a boolean"},
		{"bool", desc(&descriptorpb.FieldOptions{}), `{"packed":false}`, ""},
		{"double", option, `{"double_value":2.5}`, ""},
		{"double as an array", option, `{"double_value":[2.5]}`, "double_value: expected a number"},
		{"uint64 as a numeric string", option, `{"positive_int_value":"18446744073709551615"}`, ""},
		{"bytes as a number", option, `{"string_value":1}`, "string_value: expected a string"},
		{"nested message as a string", field, `{"options":"x"}`, "options: expected an object"},
		{"nested field", field, `{"options":{"lazy":1}}`, "options.lazy: expected a boolean"},
		{"repeated message element", option, `{"name":[{"name_part":"a","is_extension":true},{"name_part":2}]}`, "name[1].name_part: expected a string"},
		{"duration", desc(&durationpb.Duration{}), `"1s"`, ""},
		{"field mask as an array", desc(&fieldmaskpb.FieldMask{}), `["a"]`, ": expected a string"},
		{"struct as an array", desc(&structpb.Struct{}), `[]`, ": expected an object"},
		{"list as an object", desc(&structpb.ListValue{}), `{}`, ": expected an array"},
		{"value accepts anything", desc(&structpb.Value{}), `[1,"a",{}]`, ""},
		{"empty accepts anything", desc(&emptypb.Empty{}), `{}`, ""},
		{"int32 wrapper", desc(&wrapperspb.Int32Value{}), `3`, ""},
		{"int32 wrapper as a boolean", desc(&wrapperspb.Int32Value{}), `true`, ": expected an integer"},
		{"bool wrapper as a string", desc(&wrapperspb.BoolValue{}), `"true"`, ": expected a boolean"},
		{"string wrapper as a number", desc(&wrapperspb.StringValue{}), `1`, ": expected a string"},
		{"timestamp itself as an object", desc(&timestamppb.Timestamp{}), `{}`, ": expected a string"},
	} {
		d := json.NewDecoder(strings.NewReader(tc.body))
		d.UseNumber()
		var v any
		require.NoError(t, d.Decode(&v), tc.name)
		require.Equal(t, tc.want, checkMessage(tc.md, v, ""), tc.name)
	}
}

// Map fields: the value must be an object, and each entry's value is
// checked under its key.
func TestJSONTypeCheckMaps(t *testing.T) {
	t.Parallel()
	fields := desc(&structpb.Struct{}).Fields().ByName("fields")
	require.True(t, fields.IsMap())
	require.Equal(t, "f: expected an object", checkField(fields, "x", "f"))
	require.Equal(t, "f: expected an object", checkField(fields, []any{}, "f"))
	require.Empty(t, checkField(fields, map[string]any{"a": json.Number("1"), "b": "s"}, "f"))
}

func TestIsNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v             any
		number, whole bool
	}{
		{json.Number("3"), true, true},
		{json.Number("-3.0"), true, true},
		{json.Number("3.25"), true, false},
		{json.Number("1e3"), true, true},
		{"42", true, true},
		{"4.2", true, false},
		{"NaN-ish", false, false},
		{true, false, false},
		{nil, false, false},
	} {
		require.Equal(t, tc.number, isNumber(tc.v, false), "%v", tc.v)
		require.Equal(t, tc.whole, isNumber(tc.v, true), "%v", tc.v)
	}
}
