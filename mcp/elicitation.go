package mcp

// Elicitation modes (ElicitParams.Mode). An empty mode is form mode.
const (
	ElicitModeForm = "form"
	ElicitModeURL  = "url"
)

// ElicitationCompleteParams are the params of the 2025-11-25
// notifications/elicitation/complete: the server saw the user finish the
// URL elicitation with this id. A client ignores ids it does not know.
type ElicitationCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// IsURL reports whether p is a URL-mode elicitation (2025-11-25 and later):
// the user is to visit p.URL, with consent, in a browser the client and the
// model cannot inspect.
func (p *ElicitParams) IsURL() bool { return p.Mode == ElicitModeURL }
