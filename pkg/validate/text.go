package validate

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/vulnscan/vulnscan/pkg/apierr"
)

// Text checks every string of m, at any depth, for what no service can
// carry or store: bytes that are not UTF-8, which protobuf refuses to
// marshal (so the call would fail before it left the caller, as an internal
// error), and the NUL character, which PostgreSQL refuses in text. A failure
// is a 400 naming the field by its path in the request: "q", "reason",
// "filter.tag", "repos[0].branch", "findings[3].affected_code". A field of
// a well-known type (google.protobuf.StringValue, Struct and the like) is
// named as the field itself.
//
// The gateway checks each request before it calls a service, so a query
// parameter, path segment or body field with such bytes answers 400 instead
// of 500; every service checks the requests it receives, whoever sent them.
func Text(m proto.Message) error {
	if m == nil {
		return nil
	}
	// The generated structs are read first (textfast.go), allocating
	// nothing; protoreflect, which names the field, reads the messages
	// that are refused and the types the struct path leaves to it.
	if ok, _ := fastOK(reflect.ValueOf(m)); ok {
		return nil
	}
	return textOf(m.ProtoReflect(), "", false)
}

// stringOK reports whether s is valid UTF-8 without NUL.
func stringOK(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// textOf checks m's strings, naming them under prefix; within a well-known
// type (whole) every string is named prefix alone.
func textOf(m protoreflect.Message, prefix string, whole bool) (err error) {
	if !m.IsValid() {
		return nil
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := prefix
		if !whole {
			name = joinField(prefix, string(fd.Name()))
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				item := name
				if !whole {
					item += "[" + strconv.Itoa(i) + "]"
				}
				err = textValue(fd, l.Get(i), item, whole)
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapKey().Kind() == protoreflect.StringKind {
					err = textString(name, k.String())
				}
				if err == nil {
					err = textValue(fd.MapValue(), mv, name, whole)
				}
				return err == nil
			})
		default:
			err = textValue(fd, v, name, whole)
		}
		return err == nil
	})
	return err
}

// textValue checks one value of field fd (an element, for a list or map).
func textValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, name string, whole bool) error {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return textString(name, v.String())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return textOf(v.Message(), name, whole || wellKnown[fd.Message().FullName()])
	}
	return nil
}

// textString checks one string.
func textString(name, s string) error {
	if !utf8.ValidString(s) {
		return apierr.Invalid("%s must be valid UTF-8", name)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return apierr.Invalid("%s must not contain the NUL character (U+0000)", name)
	}
	return nil
}

// wellKnown are the well-known types with strings inside, whose fields
// (value, type_url, fields, paths…) the caller never names.
var wellKnown = map[protoreflect.FullName]bool{
	"google.protobuf.StringValue": true,
	"google.protobuf.Any":         true,
	"google.protobuf.Struct":      true,
	"google.protobuf.Value":       true,
	"google.protobuf.ListValue":   true,
	"google.protobuf.FieldMask":   true,
}

func joinField(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
