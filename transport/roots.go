package transport

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/tako-mcp/tako/mcp"
)

// Roots (checklist §7A): the directories the client exposes to the server.
//
// A Session keeps a list of roots when Options.Roots is non-nil (even
// empty): it declares the roots capability, answers roots/list from the
// list (as a legacy server request or a 2026-07-28 input_required round
// alike), and AddRoots, RemoveRoots and SetRoots change it while the
// session runs. Before 2026-07-28 each change that alters the list is
// announced with notifications/roots/list_changed, which is why the
// capability is declared with listChanged; 2026-07-28 has no such
// notification (the server asks for roots in each round that needs them),
// so nothing is sent and roots are declared as {}.
//
// Handlers.Roots, when set, answers roots/list instead, and the Session's
// list is not consulted: a program that computes its roots keeps them
// itself and calls NotifyRootsChanged when its answer would change.

// initRoots sets up the session's roots list; it runs in newSession.
func (s *Session) initRoots() {
	if s.opts.Roots == nil {
		return
	}
	s.roots = slices.Clone(s.opts.Roots)
	if s.opts.Handlers.Roots == nil {
		s.opts.Handlers.Roots = s.servedRoots
	}
}

// servedRoots answers roots/list from the session's list.
func (s *Session) servedRoots(context.Context) ([]mcp.Root, error) {
	return s.Roots(), nil
}

// Roots returns a copy of the session's roots list (Options.Roots and the
// changes since).
func (s *Session) Roots() []mcp.Root {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.roots)
}

// SetRoots replaces the session's roots list. Every URI must be a file://
// URI (the spec's [M]); a list with one that is not is refused whole. If
// the list changed, a legacy server is told with
// notifications/roots/list_changed; the error is that notification's, the
// list having changed anyway. A session created without Options.Roots has
// no list to change: the error wraps ErrCapability.
func (s *Session) SetRoots(ctx context.Context, roots []mcp.Root) error {
	return s.changeRoots(ctx, func([]mcp.Root) ([]mcp.Root, error) {
		return slices.Clone(roots), nil
	})
}

// AddRoots adds roots to the session's list; a root whose URI is already
// listed replaces that entry. See SetRoots for the rules.
func (s *Session) AddRoots(ctx context.Context, roots ...mcp.Root) error {
	return s.changeRoots(ctx, func(cur []mcp.Root) ([]mcp.Root, error) {
		out := slices.Clone(cur)
		for _, r := range roots {
			if i := slices.IndexFunc(out, func(x mcp.Root) bool { return x.URI == r.URI }); i >= 0 {
				out[i] = r
			} else {
				out = append(out, r)
			}
		}
		return out, nil
	})
}

// RemoveRoots removes the roots with the given URIs from the session's
// list; a URI not listed is ignored. See SetRoots for the rules.
func (s *Session) RemoveRoots(ctx context.Context, uris ...string) error {
	return s.changeRoots(ctx, func(cur []mcp.Root) ([]mcp.Root, error) {
		return slices.DeleteFunc(slices.Clone(cur), func(r mcp.Root) bool { return slices.Contains(uris, r.URI) }), nil
	})
}

// NotifyRootsChanged tells a legacy server that the roots have changed
// (notifications/roots/list_changed), for a program whose Handlers.Roots
// computes them. On 2026-07-28 it sends nothing. A session that declared
// no roots capability has nothing to announce: the error wraps
// ErrCapability.
func (s *Session) NotifyRootsChanged(ctx context.Context) error {
	if s.caps.Roots == nil {
		return fmt.Errorf("%w: this client declared no roots (set Options.Roots or Handlers.Roots)", ErrCapability)
	}
	if s.modern {
		return nil
	}
	return s.Notify(ctx, mcp.NotificationRootsListChanged, nil)
}

// changeRoots applies change to the list under the lock, then announces the
// new list if it differs from the old.
func (s *Session) changeRoots(ctx context.Context, change func([]mcp.Root) ([]mcp.Root, error)) error {
	if s.opts.Roots == nil {
		return fmt.Errorf("%w: this session keeps no roots list (set Options.Roots, even empty)", ErrCapability)
	}
	s.rootsMu.Lock()
	defer s.rootsMu.Unlock()
	cur := s.Roots()
	next, err := change(cur)
	if err != nil {
		return err
	}
	if err := checkRoots(next); err != nil {
		return err
	}
	if (len(cur) == 0 && len(next) == 0) || reflect.DeepEqual(cur, next) {
		return nil
	}
	s.mu.Lock()
	s.roots = next
	s.mu.Unlock()
	return s.NotifyRootsChanged(ctx)
}

// checkRoots refuses a root whose URI is not a file:// URI.
func checkRoots(roots []mcp.Root) error {
	for _, r := range roots {
		if !strings.HasPrefix(r.URI, "file://") {
			return fmt.Errorf("mcp: root %q is not a file:// URI", r.URI)
		}
	}
	return nil
}
