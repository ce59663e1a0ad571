package inspect

import (
	"strings"

	"github.com/tako-mcp/tako/dial"
)

// flagsOf is the tako command line's server flags for s, for "copy as a
// tako command". Values that look like secrets (an Authorization header,
// an environment variable named like a key or token) are left as a
// placeholder the person fills in: a copied command must not carry them
// to a chat or a ticket.
func flagsOf(s *dial.Server) []string {
	var f []string
	switch effectiveKind(s) {
	case dial.Stdio:
		f = append(f, "--stdio", quoteArgs(append([]string{s.Command}, s.Args...)))
		for _, e := range s.Env {
			k, v, _ := strings.Cut(e, "=")
			if secretName(k) {
				v = "…"
			}
			f = append(f, "--env", k+"="+v)
		}
	case dial.HTTP, dial.SSE:
		f = append(f, "--http", stripQuery(s.URL))
	case dial.WebSocket:
		f = append(f, "--ws", stripQuery(s.URL))
	case dial.GRPC:
		f = append(f, "--grpc", strings.TrimPrefix(s.URL, "grpc://"))
		if t := s.TLS; t != nil {
			for _, p := range [][2]string{{"--ca", t.CAFile}, {"--cert", t.CertFile}, {"--key", t.KeyFile}, {"--server-name", t.ServerName}} {
				if p[1] != "" {
					f = append(f, p[0], p[1])
				}
			}
			if t.Plaintext {
				f = append(f, "--plaintext")
			}
		}
	}
	for k, vs := range s.Header {
		for _, v := range vs {
			if secretName(k) {
				v = "…"
			}
			f = append(f, "--header", k+": "+v)
		}
	}
	return f
}

// secretName reports whether a header or variable name looks like it
// holds a credential.
func secretName(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"auth", "token", "key", "secret", "password", "cookie", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// quoteArgs joins argv into a line a POSIX shell (and tako's --stdio)
// splits back into the same words.
func quoteArgs(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = quoteArg(a)
	}
	return strings.Join(q, " ")
}

func quoteArg(a string) string {
	if a == "" {
		return "''"
	}
	if strings.IndexFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}
