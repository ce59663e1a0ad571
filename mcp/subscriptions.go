package mcp

import "slices"

// SubscriptionFilter says which notifications a 2026-07-28
// subscriptions/listen stream carries. Every kind is opt-in: the server
// sends nothing the filter does not ask for.
type SubscriptionFilter struct {
	ToolsListChanged     bool `json:"toolsListChanged,omitempty"`
	PromptsListChanged   bool `json:"promptsListChanged,omitempty"`
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	// ResourceSubscriptions asks for notifications/resources/updated on
	// these URIs; it replaces the legacy resources/subscribe.
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs asks for notifications/tasks on these tasks (tasks
	// extension; a client that did not declare it gets -32021).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// IsEmpty reports whether f asks for nothing.
func (f SubscriptionFilter) IsEmpty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged &&
		len(f.ResourceSubscriptions) == 0 && len(f.TaskIDs) == 0
}

// Denied returns what f asked for that granted (the acknowledged filter)
// left out. The spec advises a client to compare the two, since a server
// silently drops kinds it does not support.
func (f SubscriptionFilter) Denied(granted SubscriptionFilter) SubscriptionFilter {
	var d SubscriptionFilter
	d.ToolsListChanged = f.ToolsListChanged && !granted.ToolsListChanged
	d.PromptsListChanged = f.PromptsListChanged && !granted.PromptsListChanged
	d.ResourcesListChanged = f.ResourcesListChanged && !granted.ResourcesListChanged
	for _, u := range f.ResourceSubscriptions {
		if !slices.Contains(granted.ResourceSubscriptions, u) {
			d.ResourceSubscriptions = append(d.ResourceSubscriptions, u)
		}
	}
	for _, id := range f.TaskIDs {
		if !slices.Contains(granted.TaskIDs, id) {
			d.TaskIDs = append(d.TaskIDs, id)
		}
	}
	return d
}

// SubscriptionsListenParams are the params of the 2026-07-28
// subscriptions/listen request, which opens a long-lived stream of
// notifications outside any other request.
type SubscriptionsListenParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          Meta               `json:"_meta,omitempty"`
}

// SubscriptionsAcknowledgedParams are the params of
// notifications/subscriptions/acknowledged, the first message of a listen
// stream: Notifications is the subset of the request's filter the server
// will honour, and Meta carries MetaSubscriptionID (the listen request's id).
type SubscriptionsAcknowledgedParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          Meta               `json:"_meta,omitempty"`
}

// SubscriptionsListenResult is the answer to subscriptions/listen, sent only
// when the server ends the stream gracefully. Its Meta carries
// MetaSubscriptionID.
type SubscriptionsListenResult struct {
	ResultType string `json:"resultType,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}
