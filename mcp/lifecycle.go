package mcp

import (
	"encoding/json"
	"slices"
)

// Protocol revisions. Each is a date string on the wire.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestVersion is the newest revision tako speaks.
	LatestVersion = Version20260728
	// LatestLegacyVersion is the newest revision with the initialize
	// handshake and sessions.
	LatestLegacyVersion = Version20251125
)

// SupportedVersions lists every revision tako speaks, newest first.
var SupportedVersions = []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// IsSupportedVersion reports whether v is one of SupportedVersions.
func IsSupportedVersion(v string) bool { return slices.Contains(SupportedVersions, v) }

// IsModernVersion reports whether v is a stateless revision (2026-07-28 or
// later): no initialize, _meta on every request, resultType on every result.
// Version strings are dates, so they order as strings.
func IsModernVersion(v string) bool { return v >= Version20260728 }

// Reserved _meta keys.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaRelatedTask        = "io.modelcontextprotocol/related-task"
	MetaModelImmediate     = "io.modelcontextprotocol/model-immediate-response"
	MetaProgressToken      = "progressToken"
)

// Meta is a _meta object. Values are kept raw so that keys owned by other
// parties pass through untouched.
type Meta map[string]json.RawMessage

// Implementation names a client or a server (clientInfo, serverInfo).
type Implementation struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
}

// Icon is an image a client may show for a server, tool, prompt or resource.
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// ClientCapabilities is what a client declares it can do. A nil member is
// "not supported"; a non-nil empty one is "supported".
type ClientCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Roots        *RootsCapability           `json:"roots,omitempty"`
	Sampling     *SamplingCapability        `json:"sampling,omitempty"`
	Elicitation  *ElicitationCapability     `json:"elicitation,omitempty"`
	// Tasks is the 2025-11-25 core tasks capability; in 2026-07-28 tasks
	// moved to Extensions["io.modelcontextprotocol/tasks"].
	Tasks      json.RawMessage            `json:"tasks,omitempty"`
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability declares that the client answers roots/list.
type RootsCapability struct {
	// ListChanged (legacy eras only) promises notifications/roots/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability declares that the client answers sampling/createMessage.
type SamplingCapability struct {
	Context *struct{} `json:"context,omitempty"`
	Tools   *struct{} `json:"tools,omitempty"`
}

// ElicitationCapability declares the elicitation modes the client supports.
// An empty object means form mode only.
type ElicitationCapability struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

// ServerCapabilities is what a server declares it offers. Gate every feature
// call on it.
type ServerCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Logging      *struct{}                  `json:"logging,omitempty"`
	Completions  *struct{}                  `json:"completions,omitempty"`
	Prompts      *ListChangedCapability     `json:"prompts,omitempty"`
	Resources    *ResourcesCapability       `json:"resources,omitempty"`
	Tools        *ListChangedCapability     `json:"tools,omitempty"`
	Tasks        json.RawMessage            `json:"tasks,omitempty"`
	Extensions   map[string]json.RawMessage `json:"extensions,omitempty"`
}

// ListChangedCapability is the shape of the tools and prompts capabilities.
type ListChangedCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability is the resources capability.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// InitializeParams are the params of the legacy initialize request.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// DiscoverResult is the 2026-07-28 answer to server/discover.
type DiscoverResult struct {
	ResultType        string             `json:"resultType,omitempty"`
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	TTLMs             *int64             `json:"ttlMs,omitempty"`
	CacheScope        string             `json:"cacheScope,omitempty"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// Result types of 2026-07-28. A result without resultType is complete.
const (
	ResultTypeComplete      = "complete"
	ResultTypeInputRequired = "input_required"
	ResultTypeTask          = "task"
)

// Method names a client sends or answers.
const (
	MethodInitialize             = "initialize"
	MethodDiscover               = "server/discover"
	MethodPing                   = "ping"
	MethodToolsList              = "tools/list"
	MethodToolsCall              = "tools/call"
	MethodResourcesList          = "resources/list"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	MethodPromptsList            = "prompts/list"
	MethodPromptsGet             = "prompts/get"
	MethodComplete               = "completion/complete"
	MethodLoggingSetLevel        = "logging/setLevel"
	MethodSubscriptionsListen    = "subscriptions/listen"
	MethodRootsList              = "roots/list"
	MethodSamplingCreateMessage  = "sampling/createMessage"
	MethodElicitationCreate      = "elicitation/create"

	NotificationInitialized          = "notifications/initialized"
	NotificationCancelled            = "notifications/cancelled"
	NotificationProgress             = "notifications/progress"
	NotificationMessage              = "notifications/message"
	NotificationToolsListChanged     = "notifications/tools/list_changed"
	NotificationPromptsListChanged   = "notifications/prompts/list_changed"
	NotificationResourcesListChanged = "notifications/resources/list_changed"
	NotificationResourceUpdated      = "notifications/resources/updated"
	NotificationRootsListChanged     = "notifications/roots/list_changed"
	NotificationElicitationComplete  = "notifications/elicitation/complete"
	NotificationSubscriptionsAck     = "notifications/subscriptions/acknowledged"
	NotificationTasksStatus          = "notifications/tasks/status"
)
