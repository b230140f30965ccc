package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

var timeType = reflect.TypeFor[time.Time]()

// checkShape walks the JSON text alongside the Go type it decodes into and
// reports the first value that does not fit, with its full path
// (payments[3].amount_msat), which encoding/json's own errors lack: its
// unknown-field error names no path, its type errors no array index. It is
// stricter than the decoder where a file would otherwise be read in a way
// its author did not mean: field names match exactly (not case-blind), and
// null is allowed only where the format lets a value be absent (pointers).
func checkShape(data []byte, t reflect.Type) *FieldError {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := shapeWalker{dec: dec, data: data}
	if err := w.value(t, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return w.syntax(errors.New("unexpected data after the top-level object"))
	}
	return nil
}

type shapeWalker struct {
	dec  *json.Decoder
	data []byte
}

func (w *shapeWalker) token() (json.Token, *FieldError) {
	tok, err := w.dec.Token()
	if err == io.EOF {
		return nil, w.syntax(errors.New("unexpected end of file"))
	}
	if err != nil {
		return nil, w.syntax(err)
	}
	return tok, nil
}

// syntax reports malformed JSON at the decoder's position, as line and column.
func (w *shapeWalker) syntax(err error) *FieldError {
	offset := w.dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = se.Offset
	}
	before := w.data[:min(int(offset), len(w.data))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return &FieldError{Rule: RuleSyntax, Msg: fmt.Sprintf(
		"invalid JSON at line %d, column %d: %s", line, col, msg)}
}

func (w *shapeWalker) value(t reflect.Type, path string) *FieldError {
	tok, err := w.token()
	if err != nil {
		return err
	}
	if tok == nil {
		if t.Kind() == reflect.Pointer {
			return nil
		}
		return mismatch(path, t, tok)
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return checkTime(path, tok)
	case t.Kind() == reflect.Struct:
		return w.object(path, t, tok, structFields(t))
	case t.Kind() == reflect.Map:
		return w.object(path, t, tok, nil)
	case t.Kind() == reflect.Slice:
		return w.array(path, t, tok)
	}
	return checkScalar(path, t, tok)
}

// object walks a JSON object into a struct (fields names its members) or
// a map (fields nil).
func (w *shapeWalker) object(path string, t reflect.Type, tok json.Token, fields map[string]reflect.Type) *FieldError {
	if tok != json.Delim('{') {
		return mismatch(path, t, tok)
	}
	for w.dec.More() {
		keyTok, err := w.token()
		if err != nil {
			return err
		}
		key := keyTok.(string) // the decoder guarantees object keys are strings
		if fields == nil {
			if err := w.value(t.Elem(), fmt.Sprintf("%s[%q]", path, key)); err != nil {
				return err
			}
			continue
		}
		ft, ok := fields[key]
		if !ok {
			return &FieldError{Field: join(path, key), Rule: RuleUnknownField, Msg: fmt.Sprintf(
				"unknown field %q: remove it or correct its name (known here: %s)",
				key, strings.Join(sortedKeys(fields), ", "))}
		}
		if err := w.value(ft, join(path, key)); err != nil {
			return err
		}
	}
	_, err := w.token() // '}'
	return err
}

func (w *shapeWalker) array(path string, t reflect.Type, tok json.Token) *FieldError {
	if tok != json.Delim('[') {
		return mismatch(path, t, tok)
	}
	for i := 0; w.dec.More(); i++ {
		if err := w.value(t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	_, err := w.token() // ']'
	return err
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
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

func checkTime(path string, tok json.Token) *FieldError {
	s, ok := tok.(string)
	if !ok {
		return mismatch(path, timeType, tok)
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return &FieldError{Field: path, Rule: RuleType, Msg: fmt.Sprintf(
			"want an RFC 3339 time such as \"2026-01-01T00:00:00Z\", got %q", s)}
	}
	return nil
}

func checkScalar(path string, t reflect.Type, tok json.Token) *FieldError {
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
	if !fits {
		return mismatch(path, t, tok)
	}
	return nil
}

// mismatch says what the field wants and what the file holds.
func mismatch(path string, t reflect.Type, tok json.Token) *FieldError {
	return &FieldError{Field: path, Rule: RuleType, Msg: fmt.Sprintf(
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
