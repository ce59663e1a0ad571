package transport

import (
	"strings"
)

// String shows the server in one line for a log or a person: name and
// version, the negotiated revision, and the features it declared, as in
//
//	mcp-servers/everything 2.0.0 (protocol 2025-11-25; tools, resources, prompts, logging, completions)
func (i ServerInfo) String() string {
	name := i.Implementation.Name
	if name == "" {
		name = "(unnamed server)"
	}
	if i.Implementation.Version != "" {
		name += " " + i.Implementation.Version
	}
	c := i.Capabilities
	var feats []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"tools", c.Tools != nil},
		{"resources", c.Resources != nil},
		{"prompts", c.Prompts != nil},
		{"logging", c.Logging != nil},
		{"completions", c.Completions != nil},
	} {
		if f.on {
			feats = append(feats, f.name)
		}
	}
	s := name + " (protocol " + i.ProtocolVersion
	if len(feats) > 0 {
		s += "; " + strings.Join(feats, ", ")
	}
	return s + ")"
}
