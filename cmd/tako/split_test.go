package main

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`server`, []string{"server"}},
		{`  server  `, []string{"server"}},
		{"a b\tc\nd", []string{"a", "b", "c", "d"}},
		{`npx -y @scope/pkg@1.2.3`, []string{"npx", "-y", "@scope/pkg@1.2.3"}},

		// Single quotes keep everything, backslashes and double quotes too.
		{`echo 'a b'`, []string{"echo", "a b"}},
		{`echo 'a\b'`, []string{"echo", `a\b`}},
		{`echo 'say "hi"'`, []string{"echo", `say "hi"`}},
		{`echo 'a|b;c&d'`, []string{"echo", "a|b;c&d"}},
		{"echo 'line1\nline2'", []string{"echo", "line1\nline2"}},

		// Double quotes: a backslash escapes only $ ` " \ and newline.
		{`echo "a b"`, []string{"echo", "a b"}},
		{`echo "say \"hi\""`, []string{"echo", `say "hi"`}},
		{`echo "a\\b"`, []string{"echo", `a\b`}},
		{`echo "\$HOME"`, []string{"echo", "$HOME"}},
		{"echo \"\\`\"", []string{"echo", "`"}},
		{`echo "a\nb"`, []string{"echo", `a\nb`}},
		{`echo "it's"`, []string{"echo", "it's"}},
		{"echo \"a\\\nb\"", []string{"echo", "ab"}},
		{`echo "a|b"`, []string{"echo", "a|b"}},

		// Backslash outside quotes keeps the next character.
		{`echo a\ b`, []string{"echo", "a b"}},
		{`echo \'`, []string{"echo", "'"}},
		{`echo \"x\"`, []string{"echo", `"x"`}},
		{`echo \\`, []string{"echo", `\`}},
		{`echo \|`, []string{"echo", "|"}},
		{"echo a\\\nb", []string{"echo", "ab"}},
		{"echo \\\n b", []string{"echo", "b"}},

		// Pieces next to each other form one word.
		{`a'b c'"d e"f`, []string{"ab cd ef"}},
		{`--opt='x y'`, []string{"--opt=x y"}},

		// Empty quotes are an empty word; nothing else is.
		{`a '' b`, []string{"a", "", "b"}},
		{`a "" b`, []string{"a", "", "b"}},
		{`a ''`, []string{"a", ""}},

		// No expansion of any kind.
		{`ls $HOME ~ *.go ?`, []string{"ls", "$HOME", "~", "*.go", "?"}},
		{`echo ${X:-y} #not-a-comment`, []string{"echo", "${X:-y}", "#not-a-comment"}},

		// JSON in an argument, the common case for server flags.
		{`server --config '{"a": [1, 2]}'`, []string{"server", "--config", `{"a": [1, 2]}`}},

		// UTF-8 passes through.
		{`écho "héllo wörld" 日本`, []string{"écho", "héllo wörld", "日本"}},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if err != nil {
			t.Errorf("splitCommand(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("splitCommand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitCommandErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // part of the error message
	}{
		{``, "empty command"},
		{"  \t\n ", "empty command"},
		{"\\\n", "empty command"},
		{`echo 'abc`, "unterminated single quote at offset 5"},
		{`echo "abc`, "unterminated double quote at offset 5"},
		{`echo "abc\"`, "unterminated double quote"},
		{`echo "abc\`, "unterminated double quote"},
		{`echo 'it''s`, "unterminated single quote at offset 9"},
		{`echo abc\`, "backslash at the end"},
		{`server | tee log`, `unquoted '|'`},
		{`cd dir && run`, `unquoted '&'`},
		{`a; b`, `unquoted ';'`},
		{`server < in`, `unquoted '<'`},
		{`server >out`, `unquoted '>'`},
		{`(server)`, `unquoted '('`},
		{"echo `id`", "unquoted '`'"},
		{`echo $(id)`, `unquoted '('`},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if err == nil {
			t.Errorf("splitCommand(%q) = %q, want an error with %q", tt.in, got, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("splitCommand(%q): error %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"e" f\ g`, `'`, `"\`, "a\\\nb", `''`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := splitCommand(s)
		if err == nil && len(words) == 0 {
			t.Fatalf("splitCommand(%q) returned no words and no error", s)
		}
		// Words quoted back and split again give the same words.
		if err == nil {
			q := make([]string, len(words))
			for i, w := range words {
				q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
			}
			again, err := splitCommand(strings.Join(q, " "))
			if err != nil || !slices.Equal(again, words) {
				t.Fatalf("round trip of %q: %q, %v; want %q", s, again, err, words)
			}
		}
	})
}

// TestSplitShellLineKeepsJSON: at the shell's prompt a JSON object or
// array needs no quotes: it is one word, its quotes and blanks kept.
func TestSplitShellLineKeepsJSON(t *testing.T) {
	for line, want := range map[string][]string{
		`call echo {"message": "hi there"}`:            {"call", "echo", `{"message": "hi there"}`},
		`call echo {"m": "a } b", "n": [1, {"x": 2}]}`: {"call", "echo", `{"m": "a } b", "n": [1, {"x": 2}]}`},
		`call echo {"m": "say \"}\""} --json`:          {"call", "echo", `{"m": "say \"}\""}`, "--json"},
		`call echo '{"message": "quoted"}'`:            {"call", "echo", `{"message": "quoted"}`},
		`prompt p x={a} y`:                             {"prompt", "p", "x={a}", "y"},
		`call t {a}b`:                                  {"call", "t", "{a}b"}, // not JSON on its own: a shell word
	} {
		got, err := splitShellLine(line)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("splitShellLine(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	if _, err := splitShellLine(`call echo {"message": "open`); err == nil || !strings.Contains(err.Error(), "does not close") {
		t.Errorf("unclosed JSON: %v", err)
	}
	// Outside the shell, --stdio "..." splits as a POSIX shell would.
	if got, _ := splitCommand(`a {"b": 1}`); !slices.Equal(got, []string{"a", "{b:", "1}"}) {
		t.Errorf("splitCommand changed: %q", got)
	}
}
