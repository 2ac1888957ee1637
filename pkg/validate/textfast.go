package validate

import (
	"reflect"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
)

// The common requests are checked through their generated Go structs:
// protoreflect hands each element of a repeated field out as a new value,
// which made the check of a report of 100 findings cost 600 allocations,
// twice the time of marshalling it. A message type whose fields are all
// text, lists of text, other messages or lists of them, and plain numbers
// and bytes is read field by field from its struct, allocating nothing;
// one with a map or a oneof, or a layout other than the open struct API,
// is left to protoreflect (textOf).

type fastKind uint8

const (
	fastString    fastKind = iota // string
	fastOptString                 // *string (proto3 optional)
	fastStrings                   // []string
	fastMessage                   // *M
	fastMessages                  // []*M
	fastNoText                    // numbers, booleans, bytes, enums
)

type fastField struct {
	index int
	kind  fastKind
}

// fastPlan is a message type's fields to read; ok is false when the type
// must be left to protoreflect.
type fastPlan struct {
	fields []fastField
	ok     bool
}

var (
	fastPlans   sync.Map // reflect.Type (the struct) → fastPlan
	messageType = reflect.TypeFor[proto.Message]()
)

// openInternals are the untagged fields of a message of the open struct
// API, which hold no field's value (unknown fields are not read by either
// path: no service stores them).
var openInternals = map[string]bool{"state": true, "sizeCache": true, "unknownFields": true}

func planOf(t reflect.Type) fastPlan {
	if p, ok := fastPlans.Load(t); ok {
		return p.(fastPlan)
	}
	p := buildPlan(t)
	fastPlans.Store(t, p)
	return p
}

func buildPlan(t reflect.Type) fastPlan {
	var p fastPlan
	for i := range t.NumField() {
		sf := t.Field(i)
		if _, oneof := sf.Tag.Lookup("protobuf_oneof"); oneof {
			return fastPlan{}
		}
		tag, ok := sf.Tag.Lookup("protobuf")
		if !ok {
			if openInternals[sf.Name] {
				continue
			}
			return fastPlan{} // extension fields, or a layout not known here
		}
		if !sf.IsExported() || strings.Contains(tag, ",weak") {
			return fastPlan{}
		}
		kind, ok := fieldKind(sf.Type)
		if !ok {
			return fastPlan{}
		}
		if kind != fastNoText {
			p.fields = append(p.fields, fastField{index: i, kind: kind})
		}
	}
	p.ok = true
	return p
}

func fieldKind(t reflect.Type) (fastKind, bool) {
	isMessage := func(t reflect.Type) bool {
		return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && t.Implements(messageType)
	}
	switch t.Kind() {
	case reflect.String:
		return fastString, true
	case reflect.Bool, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return fastNoText, true // enums are int32 kinds
	case reflect.Pointer:
		switch {
		case t.Elem().Kind() == reflect.String:
			return fastOptString, true
		case isMessage(t):
			return fastMessage, true
		case t.Elem().Kind() != reflect.Struct && t.Elem().Kind() != reflect.Slice && t.Elem().Kind() != reflect.Map:
			return fastNoText, true // optional numbers and booleans
		}
	case reflect.Slice:
		e := t.Elem()
		switch {
		case e.Kind() == reflect.Uint8:
			return fastNoText, true // bytes
		case e.Kind() == reflect.String:
			return fastStrings, true
		case isMessage(e):
			return fastMessages, true
		case e.Kind() != reflect.Struct && e.Kind() != reflect.Slice && e.Kind() != reflect.Map && e.Kind() != reflect.Pointer && e.Kind() != reflect.Interface:
			return fastNoText, true // repeated numbers and enums
		}
	}
	return 0, false
}

// fastOK reports whether every string of the message rv (a pointer to a
// generated struct) is fit; handled is false when some type on the way
// must be left to protoreflect.
func fastOK(rv reflect.Value) (ok, handled bool) {
	if rv.Kind() != reflect.Pointer || rv.Type().Elem().Kind() != reflect.Struct {
		return false, false
	}
	if rv.IsNil() {
		return true, true
	}
	p := planOf(rv.Type().Elem())
	if !p.ok {
		return false, false
	}
	sv := rv.Elem()
	for _, f := range p.fields {
		fv := sv.Field(f.index)
		switch f.kind {
		case fastString:
			if !stringOK(fv.String()) {
				return false, true
			}
		case fastOptString:
			if !fv.IsNil() && !stringOK(fv.Elem().String()) {
				return false, true
			}
		case fastStrings:
			for i := range fv.Len() {
				if !stringOK(fv.Index(i).String()) {
					return false, true
				}
			}
		case fastMessage:
			if ok, handled := fastOK(fv); !handled || !ok {
				return ok, handled
			}
		case fastMessages:
			for i := range fv.Len() {
				if ok, handled := fastOK(fv.Index(i)); !handled || !ok {
					return ok, handled
				}
			}
		}
	}
	return true, true
}
