package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

var timeType = reflect.TypeFor[time.Time]()

// checkShape walks the JSON text alongside the Go type it decodes into and
// reports the first value that does not fit, with its full path
// (payments[3].amount_msat), which encoding/json's own errors lack: its
// unknown-field error names no path, its type errors no array index. It is
// stricter than the decoder where a file would otherwise be read in a way
// its author did not mean: field names match exactly (not case-blind), and
// null is allowed only where the format lets a value be absent (pointers).
//
// The text must be valid JSON (decodeFile has json.Unmarshal check it
// first): the walk reads it with a lexer that checks no syntax and
// allocates only strings, where json.Decoder.Token allocates per token, and
// builds a value's path only to name it in an error (bench/bench_load.py).
func checkShape(data []byte, t reflect.Type) *FieldError {
	w := shapeWalker{lex: lexer{data: data}}
	return w.value(t)
}

type shapeWalker struct {
	lex    lexer
	at     []step                                   // the path to the value being walked
	fields map[reflect.Type]map[string]reflect.Type // structFields, once per struct type
}

func (w *shapeWalker) fieldsOf(t reflect.Type) map[string]reflect.Type {
	if w.fields == nil {
		w.fields = make(map[reflect.Type]map[string]reflect.Type)
	}
	f, ok := w.fields[t]
	if !ok {
		f = structFields(t)
		w.fields[t] = f
	}
	return f
}

// step is one step of a path: into an object's field, an array's element
// or a map's entry.
type step struct {
	kind  stepKind
	key   string
	index int
}

type stepKind uint8

const (
	stepField stepKind = iota
	stepElement
	stepEntry
)

// path formats the walker's position: payments[3].amount_msat,
// local_balances_msat["700001x1x1"].
func (w *shapeWalker) path() string {
	var b strings.Builder
	for _, s := range w.at {
		switch s.kind {
		case stepField:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		case stepElement:
			fmt.Fprintf(&b, "[%d]", s.index)
		case stepEntry:
			fmt.Fprintf(&b, "[%q]", s.key)
		}
	}
	return b.String()
}

func (w *shapeWalker) token() (json.Token, *FieldError) {
	tok, ok := w.lex.token()
	if !ok {
		return nil, &FieldError{Rule: RuleSyntax, Msg: "unexpected end of file"}
	}
	return tok, nil
}

// syntaxError reports malformed JSON at a byte offset, as line and column.
func syntaxError(data []byte, offset int64, err error) *FieldError {
	before := data[:min(int(offset), len(data))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return &FieldError{Rule: RuleSyntax, Msg: fmt.Sprintf(
		"invalid JSON at line %d, column %d: %s", line, col, msg)}
}

func (w *shapeWalker) value(t reflect.Type) *FieldError {
	tok, err := w.token()
	if err != nil {
		return err
	}
	if tok == nil {
		if t.Kind() == reflect.Pointer {
			return nil
		}
		return w.mismatch(t, tok)
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return w.checkTime(tok)
	case t.Kind() == reflect.Struct:
		return w.object(t, tok, w.fieldsOf(t))
	case t.Kind() == reflect.Map:
		return w.object(t, tok, nil)
	case t.Kind() == reflect.Slice:
		return w.array(t, tok)
	}
	if !scalarFits(t, tok) {
		return w.mismatch(t, tok)
	}
	return nil
}

// object walks a JSON object into a struct (fields names its members) or
// a map (fields nil).
func (w *shapeWalker) object(t reflect.Type, tok json.Token, fields map[string]reflect.Type) *FieldError {
	if tok != json.Delim('{') {
		return w.mismatch(t, tok)
	}
	for w.lex.more() {
		keyTok, err := w.token()
		if err != nil {
			return err
		}
		key := keyTok.(string) // valid JSON: object keys are strings
		var elem reflect.Type
		if fields == nil {
			elem = t.Elem()
			w.at = append(w.at, step{kind: stepEntry, key: key})
		} else {
			var ok bool
			elem, ok = fields[key]
			w.at = append(w.at, step{kind: stepField, key: key})
			if !ok {
				return &FieldError{Field: w.path(), Rule: RuleUnknownField, Msg: fmt.Sprintf(
					"unknown field %q: remove it or correct its name (known here: %s)",
					key, strings.Join(sortedKeys(fields), ", "))}
			}
		}
		if err := w.value(elem); err != nil {
			return err
		}
		w.at = w.at[:len(w.at)-1]
	}
	_, err := w.token() // '}'
	return err
}

func (w *shapeWalker) array(t reflect.Type, tok json.Token) *FieldError {
	if tok != json.Delim('[') {
		return w.mismatch(t, tok)
	}
	w.at = append(w.at, step{kind: stepElement})
	for i := 0; w.lex.more(); i++ {
		w.at[len(w.at)-1].index = i
		if err := w.value(t.Elem()); err != nil {
			return err
		}
	}
	w.at = w.at[:len(w.at)-1]
	_, err := w.token() // ']'
	return err
}

// structFields maps the JSON names of t's fields to their types.
func structFields(t reflect.Type) map[string]reflect.Type {
	fields := make(map[string]reflect.Type)
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

func (w *shapeWalker) checkTime(tok json.Token) *FieldError {
	s, ok := tok.(string)
	if !ok {
		return w.mismatch(timeType, tok)
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return &FieldError{Field: w.path(), Rule: RuleType, Msg: fmt.Sprintf(
			"want an RFC 3339 time such as \"2026-01-01T00:00:00Z\", got %q", s)}
	}
	return nil
}

// scalarFits reports whether tok decodes into the scalar type t.
func scalarFits(t reflect.Type, tok json.Token) bool {
	var fits bool
	switch t.Kind() {
	case reflect.String:
		_, fits = tok.(string)
	case reflect.Bool:
		_, fits = tok.(bool)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, isNum := tok.(json.Number)
		_, err := strconv.ParseInt(string(n), 10, t.Bits())
		fits = isNum && err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, isNum := tok.(json.Number)
		_, err := strconv.ParseUint(string(n), 10, t.Bits())
		fits = isNum && err == nil
	case reflect.Float32, reflect.Float64:
		n, isNum := tok.(json.Number)
		_, err := strconv.ParseFloat(string(n), t.Bits())
		fits = isNum && err == nil
	default:
		panic(fmt.Sprintf("scenario: no shape rule for %v", t))
	}
	return fits
}

// mismatch says what the field wants and what the file holds.
func (w *shapeWalker) mismatch(t reflect.Type, tok json.Token) *FieldError {
	return &FieldError{Field: w.path(), Rule: RuleType, Msg: fmt.Sprintf(
		"want %s, got %s", describeType(t), describeToken(tok))}
}

func describeType(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		return describeType(t.Elem()) + " or null"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		if t == timeType {
			return "an RFC 3339 time string"
		}
		return "an object"
	}
	return t.String()
}

func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + string(v)
	case bool:
		return strconv.FormatBool(v)
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	}
	return fmt.Sprint(tok)
}

// lexer reads the tokens of JSON text as json.Decoder.Token does with
// UseNumber (delimiters, strings unescaped, json.Number, bools, nil), with
// no allocation but a string's. It checks no syntax and must be given valid
// JSON.
type lexer struct {
	data []byte
	pos  int
}

// skip passes whitespace and the ',' and ':' separators, which valid JSON
// holds only where Token passes them by.
func (l *lexer) skip() {
	for l.pos < len(l.data) {
		switch l.data[l.pos] {
		case ' ', '\t', '\n', '\r', ',', ':':
			l.pos++
		default:
			return
		}
	}
}

// more reports whether the array or object being read has another element.
func (l *lexer) more() bool {
	l.skip()
	return l.pos < len(l.data) && l.data[l.pos] != ']' && l.data[l.pos] != '}'
}

// token is the next token; ok is false at the end of the text.
func (l *lexer) token() (tok json.Token, ok bool) {
	l.skip()
	if l.pos >= len(l.data) {
		return nil, false
	}
	switch c := l.data[l.pos]; c {
	case '{', '}', '[', ']':
		l.pos++
		return json.Delim(c), true
	case '"':
		return l.str(), true
	case 't':
		l.pos += len("true")
		return true, true
	case 'f':
		l.pos += len("false")
		return false, true
	case 'n':
		l.pos += len("null")
		return nil, true
	}
	start := l.pos
	for l.pos < len(l.data) && strings.IndexByte("+-.0123456789eE", l.data[l.pos]) >= 0 {
		l.pos++
	}
	return json.Number(l.data[start:l.pos]), true
}

// str reads a string; one with escapes or invalid UTF-8 is decoded by
// encoding/json, which knows every escape and replaces bad bytes as Token
// does.
func (l *lexer) str() string {
	start, plain := l.pos, true
	for l.pos++; l.data[l.pos] != '"'; l.pos++ {
		if l.data[l.pos] == '\\' {
			plain = false
			l.pos++
		}
	}
	l.pos++
	quoted := l.data[start:l.pos]
	if plain && utf8.Valid(quoted) {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		panic(fmt.Sprintf("scenario: lexer given invalid JSON: %v", err))
	}
	return s
}
