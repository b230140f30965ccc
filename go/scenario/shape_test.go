package scenario

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"testing"
)

// TestLexerReadsAsDecoderTokenDoes holds the shape check's lexer to
// json.Decoder.Token (with UseNumber) on valid JSON: the same tokens, in
// the same order, strings unescaped alike.
func TestLexerReadsAsDecoderTokenDoes(t *testing.T) {
	example, err := os.ReadFile(examples + "base-example.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		text string
	}{
		{"scalars", `[true, false, null, 0, -1, 12.5e-3, 1E+9, "", "a b"]`},
		{"nesting", `{"a": {"b": [[], {}, [1, {"c": null}]]}, "d": []}`},
		{"whitespace", " \t\r\n{ \"k\" :\n [ 1 ,\t2 ] }\n"},
		{"escapes", `{"q\"k": "line\nbreak \\ \/ \u00e9 \ud83d\ude00 \t"}`},
		{"utf-8", `["é", "日本", "😀"]`},
		{"invalid utf-8", "[\"a\xffb\", \"\xc3\"]"},
		{"separators inside strings", `{"a,b:c": "x,y:z]}"}`},
		{"base example", string(example)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.text)) {
				t.Fatalf("the case is not valid JSON: %q", tc.text)
			}
			want := decoderTokens(t, tc.text)
			var got []json.Token
			lex := lexer{data: []byte(tc.text)}
			for tok, ok := lex.token(); ok; tok, ok = lex.token() {
				got = append(got, tok)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("lexer read\n%#v\nDecoder.Token reads\n%#v", got, want)
			}
		})
	}
}

func decoderTokens(t *testing.T, text string) []json.Token {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var out []json.Token
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tok)
	}
}

// TestLexerMore wants more() to see an element ahead exactly where
// Decoder.More does.
func TestLexerMore(t *testing.T) {
	tests := []struct {
		text string
		skip int // tokens read before asking
		want bool
	}{
		{`[]`, 1, false},
		{`[ 1 ]`, 1, true},
		{`[1 , 2]`, 2, true},
		{`[1 , 2 ]`, 3, false},
		{`{"a": 1}`, 1, true},
		{`{"a": 1 }`, 3, false},
	}
	for _, tc := range tests {
		lex := lexer{data: []byte(tc.text)}
		dec := json.NewDecoder(bytes.NewReader([]byte(tc.text)))
		for range tc.skip {
			lex.token()
			if _, err := dec.Token(); err != nil {
				t.Fatal(err)
			}
		}
		if got := lex.more(); got != tc.want || dec.More() != tc.want {
			t.Errorf("%s after %d tokens: lexer %v, Decoder %v, want %v", tc.text, tc.skip, got, dec.More(), tc.want)
		}
	}
}
