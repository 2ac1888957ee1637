package validate

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/typepb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestTextPaths: the struct path serves the requests it can read, with no
// allocation, and leaves to protoreflect the types it cannot (a map, a
// oneof, extensions).
func TestTextPaths(t *testing.T) { // not parallel: AllocsPerRun
	list := &descriptorpb.FileDescriptorProto{Name: proto.String("a"), Dependency: []string{"b", "c", "d"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"), Field: []*descriptorpb.FieldDescriptorProto{{Name: proto.String("f")}}}}}
	for _, tc := range []struct {
		name    string
		msg     proto.Message
		handled bool
	}{
		{"lists of text and of messages", list, true},
		{"a wrapper", wrapperspb.String("x"), true},
		{"a nil message", (*descriptorpb.FileDescriptorProto)(nil), true},
		{"a map", &structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewStringValue("v")}}, false},
		{"a oneof", structpb.NewStringValue("v"), false},
		{"extensions", &descriptorpb.FileDescriptorProto{Options: &descriptorpb.FileOptions{GoPackage: proto.String("x")}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, handled := fastOK(reflect.ValueOf(tc.msg))
			require.Equal(t, tc.handled, handled)
			if handled {
				require.True(t, ok)
			}
		})
	}
	require.Zero(t, testing.AllocsPerRun(100, func() {
		if Text(list) != nil {
			t.Fatal("refused")
		}
	}), "allocations per check")
}

func TestText(t *testing.T) {
	t.Parallel()
	field := func(fs ...*descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String("M"), Field: fs}
	}
	named := func(n string) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(n)}
	}
	// structpb's constructors from Go values refuse text that is not UTF-8.
	str := func(k string, v *structpb.Value) *structpb.Struct {
		return &structpb.Struct{Fields: map[string]*structpb.Value{k: v}}
	}
	for _, tc := range []struct {
		name string
		msg  proto.Message
		want string
	}{
		{"nil", nil, ""},
		{"empty", &descriptorpb.FileDescriptorProto{}, ""},
		{"valid text of every kind", &descriptorpb.FileDescriptorProto{Name: proto.String("répertoire/ünïcode ✓.proto"),
			MessageType: []*descriptorpb.DescriptorProto{field(named("a\tb\nc\x01"))}, Dependency: []string{"x", "\uFFFD"}}, ""},
		{"NUL at the top", &descriptorpb.FileDescriptorProto{Name: proto.String("a\x00b")}, "name must not contain the NUL character (U+0000)"},
		{"NUL alone", &descriptorpb.FileDescriptorProto{Name: proto.String("\x00")}, "name must not contain the NUL character (U+0000)"},
		{"not UTF-8 at the top", &descriptorpb.FileDescriptorProto{Package: proto.String("caf\xe9")}, "package must be valid UTF-8"},
		{"a truncated sequence", &descriptorpb.FileDescriptorProto{Package: proto.String("\xe2\x82")}, "package must be valid UTF-8"},
		{"a surrogate", &descriptorpb.FileDescriptorProto{Package: proto.String("\xed\xa0\x80")}, "package must be valid UTF-8"},
		{"in a list", &descriptorpb.FileDescriptorProto{Dependency: []string{"ok", "ok", "b\x00"}}, "dependency[2] must not contain the NUL character (U+0000)"},
		{"nested lists", &descriptorpb.FileDescriptorProto{MessageType: []*descriptorpb.DescriptorProto{field(named("ok")), field(named("ok"), named("\xff"))}},
			"message_type[1].field[1].name must be valid UTF-8"},
		{"nested message", &descriptorpb.FileDescriptorProto{Options: &descriptorpb.FileOptions{GoPackage: proto.String("x\x00")}},
			"options.go_package must not contain the NUL character (U+0000)"},
		{"a well-known type is named as its field", &typepb.Type{Options: []*typepb.Option{{Name: "o", Value: &anypb.Any{TypeUrl: "\xff"}}}},
			"options[0].value must be valid UTF-8"},
		{"a wrapper at the top", wrapperspb.String("a\x00"), "value must not contain the NUL character (U+0000)"},
		{"a map key", str("k\x00", structpb.NewStringValue("v")), "fields must not contain the NUL character (U+0000)"},
		{"a map value, deep", str("k", structpb.NewStructValue(str("l", structpb.NewListValue(&structpb.ListValue{
			Values: []*structpb.Value{structpb.NewStringValue("ok"), structpb.NewStringValue("\xff")}})))), "fields must be valid UTF-8"},
		{"bytes are not text", &anypb.Any{TypeUrl: "t", Value: []byte{0, 0xff}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireVerdict(t, Text(tc.msg), tc.want)
			if tc.msg == nil {
				return
			}
			// Both paths agree wherever the struct path applies.
			slow := textOf(tc.msg.ProtoReflect(), "", false) == nil
			require.Equal(t, tc.want == "", slow, "protoreflect's verdict")
			if ok, handled := fastOK(reflect.ValueOf(tc.msg)); handled {
				require.Equal(t, slow, ok, "the struct path's verdict")
			}
		})
	}
}
