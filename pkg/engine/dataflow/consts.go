package dataflow

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vulnscan/vulnscan/pkg/engine/ir"
)

// constString renders a constant as the string it becomes in concatenation.
func constString(c *ir.Const) string {
	switch c.Kind {
	case ir.ConstStr:
		return c.Str
	case ir.ConstInt:
		return strconv.FormatInt(c.Int, 10)
	case ir.ConstFloat:
		return strconv.FormatFloat(c.Float, 'g', -1, 64)
	case ir.ConstBool:
		return strconv.FormatBool(c.Bool)
	}
	return "null"
}

// truthy reports a constant's truth value, if it has one.
func truthy(c *ir.Const) (bool, bool) {
	switch c.Kind {
	case ir.ConstBool:
		return c.Bool, true
	case ir.ConstInt:
		return c.Int != 0, true
	case ir.ConstFloat:
		return c.Float != 0, true
	case ir.ConstNull:
		return false, true
	case ir.ConstStr:
		return c.Str != "", true
	}
	return false, false
}

func num(c *ir.Const) (float64, bool, bool) { // value, isInt, ok
	switch c.Kind {
	case ir.ConstInt:
		return float64(c.Int), true, true
	case ir.ConstFloat:
		return c.Float, false, true
	case ir.ConstBool:
		if c.Bool {
			return 1, true, true
		}
		return 0, true, true
	case ir.ConstStr:
		// a one-character string standing for a char
		if r, n := utf8.DecodeRuneInString(c.Str); n == len(c.Str) && n > 0 {
			return float64(r), true, true
		}
	}
	return 0, false, false
}

func constEqual(x, y *ir.Const) (bool, bool) {
	if x.Kind == y.Kind {
		return *x == *y, true
	}
	if x.Kind == ir.ConstNull || y.Kind == ir.ConstNull {
		return false, true
	}
	a, _, ok1 := num(x)
	b, _, ok2 := num(y)
	if ok1 && ok2 {
		return a == b, true
	}
	return false, false
}

// foldBinary evaluates a binary operation on constants.
func foldBinary(op string, x, y *ir.Const) *ir.Const {
	switch op {
	case "==", "===", "is":
		if eq, ok := constEqual(x, y); ok {
			return ir.Bool(eq)
		}
		return nil
	case "!=", "!==", "is not", "<>":
		if eq, ok := constEqual(x, y); ok {
			return ir.Bool(!eq)
		}
		return nil
	case "&&", "and":
		if t, ok := truthy(x); ok {
			if !t {
				return x
			}
			return y
		}
		return nil
	case "||", "or":
		if t, ok := truthy(x); ok {
			if t {
				return x
			}
			return y
		}
		return nil
	case "??":
		if x.Kind == ir.ConstNull {
			return y
		}
		return x
	case ".":
		return ir.Str(constString(x) + constString(y))
	}
	if op == "+" && (x.Kind == ir.ConstStr || y.Kind == ir.ConstStr) {
		return ir.Str(constString(x) + constString(y))
	}
	if x.Kind == ir.ConstStr && y.Kind == ir.ConstStr {
		switch op {
		case "<":
			return ir.Bool(x.Str < y.Str)
		case "<=":
			return ir.Bool(x.Str <= y.Str)
		case ">":
			return ir.Bool(x.Str > y.Str)
		case ">=":
			return ir.Bool(x.Str >= y.Str)
		case "in":
			return ir.Bool(strings.Contains(y.Str, x.Str))
		}
		return nil
	}
	a, ai, ok1 := num(x)
	b, bi, ok2 := num(y)
	if !ok1 || !ok2 {
		return nil
	}
	ints := ai && bi
	mk := func(v float64) *ir.Const {
		if ints && v == math.Trunc(v) && math.Abs(v) < 1<<62 {
			return ir.Int(int64(v))
		}
		return ir.Float(v)
	}
	switch op {
	case "+":
		return mk(a + b)
	case "-":
		return mk(a - b)
	case "*":
		return mk(a * b)
	case "/":
		if b == 0 {
			return nil
		}
		if ints {
			return ir.Int(int64(a) / int64(b))
		}
		return ir.Float(a / b)
	case "//":
		if b == 0 {
			return nil
		}
		return mk(math.Floor(a / b))
	case "%":
		if b == 0 || !ints {
			return nil
		}
		return ir.Int(int64(a) % int64(b))
	case "**":
		return mk(math.Pow(a, b))
	case "<":
		return ir.Bool(a < b)
	case "<=":
		return ir.Bool(a <= b)
	case ">":
		return ir.Bool(a > b)
	case ">=":
		return ir.Bool(a >= b)
	}
	if ints {
		i, j := int64(a), int64(b)
		switch op {
		case "&":
			return ir.Int(i & j)
		case "|":
			return ir.Int(i | j)
		case "^":
			return ir.Int(i ^ j)
		case "<<":
			if j >= 0 && j < 63 {
				return ir.Int(i << uint(j))
			}
		case ">>", ">>>":
			if j >= 0 && j < 63 {
				return ir.Int(i >> uint(j))
			}
		}
	}
	return nil
}

func foldUnary(op string, x *ir.Const) *ir.Const {
	switch op {
	case "!", "not":
		if t, ok := truthy(x); ok {
			return ir.Bool(!t)
		}
	case "-":
		switch x.Kind {
		case ir.ConstInt:
			return ir.Int(-x.Int)
		case ir.ConstFloat:
			return ir.Float(-x.Float)
		}
	case "+":
		if x.Kind == ir.ConstInt || x.Kind == ir.ConstFloat {
			return x
		}
	case "~":
		if x.Kind == ir.ConstInt {
			return ir.Int(^x.Int)
		}
	}
	return nil
}

// evaluate runs a built-in evaluator on constant operands (receiver first
// when the call has one). props resolves configuration lookups.
func evaluate(fn string, ops []*ir.Const, props map[string]string) *ir.Const {
	arg := func(i int) *ir.Const {
		if i < len(ops) {
			return ops[i]
		}
		return nil
	}
	str := func(i int) (string, bool) {
		c := arg(i)
		if c == nil {
			return "", false
		}
		return constString(c), true
	}
	integer := func(i int) (int, bool) {
		c := arg(i)
		if c == nil {
			return 0, false
		}
		v, isInt, ok := num(c)
		if !ok || !isInt || c.Kind == ir.ConstStr {
			return 0, false
		}
		return int(v), true
	}
	if fn == "property" {
		key, ok := str(0)
		if !ok {
			return nil
		}
		if v, found := props[key]; found {
			return ir.Str(v)
		}
		if d, ok := str(1); ok && arg(1).Kind != ir.ConstNull {
			return ir.Str(d)
		}
		return nil
	}
	for i := range ops {
		if ops[i] == nil {
			return nil
		}
	}
	s, _ := str(0)
	switch fn {
	case "identity":
		return arg(0)
	case "concat":
		var b strings.Builder
		for i := range ops {
			b.WriteString(constString(ops[i]))
		}
		return ir.Str(b.String())
	case "char_at":
		i, ok := integer(1)
		r := []rune(s)
		if ok && i >= 0 && i < len(r) {
			return ir.Str(string(r[i]))
		}
	case "substring":
		r := []rune(s)
		i, ok := integer(1)
		if !ok || i < 0 || i > len(r) {
			return nil
		}
		j := len(r)
		if len(ops) > 2 {
			if j, ok = integer(2); !ok || j < i || j > len(r) {
				return nil
			}
		}
		return ir.Str(string(r[i:j]))
	case "to_upper":
		return ir.Str(strings.ToUpper(s))
	case "to_lower":
		return ir.Str(strings.ToLower(s))
	case "trim":
		return ir.Str(strings.TrimSpace(s))
	case "length":
		return ir.Int(int64(utf8.RuneCountInString(s)))
	case "equals":
		t, _ := str(1)
		return ir.Bool(s == t)
	case "equals_ignore_case":
		t, _ := str(1)
		return ir.Bool(strings.EqualFold(s, t))
	case "index_of":
		t, _ := str(1)
		return ir.Int(int64(strings.Index(s, t)))
	case "starts_with":
		t, _ := str(1)
		return ir.Bool(strings.HasPrefix(s, t))
	case "ends_with":
		t, _ := str(1)
		return ir.Bool(strings.HasSuffix(s, t))
	case "contains":
		t, _ := str(1)
		return ir.Bool(strings.Contains(s, t))
	case "replace":
		if len(ops) < 3 {
			return nil
		}
		old, _ := str(1)
		nw, _ := str(2)
		return ir.Str(strings.ReplaceAll(s, old, nw))
	case "value_of":
		return ir.Str(s)
	case "parse_int":
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err == nil {
			return ir.Int(v)
		}
	case "split_get":
		sep, _ := str(1)
		i, ok := integer(2)
		parts := strings.Split(s, sep)
		if ok && sep != "" && i >= 0 && i < len(parts) {
			return ir.Str(parts[i])
		}
	}
	return nil
}
