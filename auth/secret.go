package auth

import (
	"fmt"
	"log/slog"
)

// Secret is a string that must not be shown: an access or refresh token, a
// client secret, an authorization code. Printing it with any fmt verb, or
// logging it with log/slog, gives "[redacted]" (or "" when it is empty);
// Reveal returns the value. Secrets still marshal to JSON as their value,
// since a token store has to keep them.
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret's value, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// String redacts.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString redacts, for %#v.
func (s Secret) GoString() string { return fmt.Sprintf("auth.Secret(%q)", s.String()) }

// Format redacts for every verb, %x and %q included.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, s.GoString())
		return
	}
	fmt.Fprint(f, s.String())
}

// LogValue redacts in structured logs.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
